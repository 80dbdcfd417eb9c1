"""`gradebook --roster FILE --deadline T`: a roster of git repositories, each graded
at the commit its deadline and late policy pick, read as data (never checked out).

The repositories are made here, in tmp_path, with commits dated before and after
the deadline (GIT_COMMITTER_DATE), and cloned over file:// (--allow-local-repos)."""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import ROOT

from grader.classroom.gradebook import repositories
from grader.classroom.gradebook.repositories import (
    Entry,
    Policy,
    check_url,
    deadline_spec,
    fetch,
    policy_spec,
    read_roster,
    shown_url,
)
from grader.classroom.gradebook.roster import read_solution
from grader.learner.errors import UsageError

CROP = "01-crop-context"
DEADLINE = datetime(2026, 12, 1, 23, 59, tzinfo=timezone.utc)
EARLY = "class Solution:\n    early = True\n"
LATE = "class Solution:\n    late = True\n"


def commit(repo: Path, files: dict[str, str], when: datetime,
           links: dict[str, str] | None = None) -> str:
    """Commit these files, dated `when` (author and committer), and return its hash."""
    repo.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GIT_AUTHOR_NAME="learner", GIT_AUTHOR_EMAIL="l@example.org",
               GIT_COMMITTER_NAME="learner", GIT_COMMITTER_EMAIL="l@example.org",
               GIT_AUTHOR_DATE=when.isoformat(), GIT_COMMITTER_DATE=when.isoformat(),
               GIT_CONFIG_NOSYSTEM="1")
    run = lambda *a: subprocess.run(["git", *a], cwd=repo, env=env, check=True,  # noqa: E731
                                    capture_output=True, text=True).stdout
    if not (repo / ".git").exists():
        run("init", "-q", "-b", "main")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    for name, target in (links or {}).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).symlink_to(target)
    run("add", "-A")
    run("commit", "-q", "-m", "work")
    return run("rev-parse", "HEAD").strip()


def two_commits(repo: Path, late_by: timedelta = timedelta(hours=1)) -> tuple[str, str]:
    early = commit(repo, {f"problems/{CROP}/solution.py": EARLY}, DEADLINE - timedelta(days=1))
    late = commit(repo, {f"problems/{CROP}/solution.py": LATE}, DEADLINE + late_by)
    return early, late


def fetched(tmp_path: Path, repo: Path, policy: Policy, allow_local: bool = True):
    hand_in = tmp_path / "hand-in" / repo.name
    shutil.rmtree(hand_in, ignore_errors=True)  # as each run starts afresh
    source = fetch(Entry(repo.name, f"file://{repo}"), tmp_path / "clones", hand_in, policy,
                   allow_local)
    solution = hand_in / "problems" / CROP / "solution.py"
    return source, solution.read_text() if solution.exists() else None


def test_the_last_commit_before_the_deadline_is_graded(tmp_path: Path) -> None:
    early, _late = two_commits(tmp_path / "ada")
    # As GitHub does, the server filters: the clone holds no file's contents until read.
    subprocess.run(["git", "-C", str(tmp_path / "ada"), "config", "uploadpack.allowFilter",
                    "true"], check=True)
    source, text = fetched(tmp_path, tmp_path / "ada", Policy(DEADLINE))
    assert source.error is None, source.error
    promisor = subprocess.run(["git", "--git-dir", str(tmp_path / "clones" / "ada.git"),
                               "config", "remote.origin.promisor"], capture_output=True, text=True)
    assert promisor.stdout.strip() == "true"
    assert (source.commit, text) == (early, EARLY)
    assert source.late_minutes == 0 and source.later_commits == 1
    assert source.committed == (DEADLINE - timedelta(days=1)).isoformat()


def test_grace_and_latest_grade_a_late_commit_as_late(tmp_path: Path) -> None:
    _early, late = two_commits(tmp_path / "bo", late_by=timedelta(minutes=90))
    within = fetched(tmp_path, tmp_path / "bo", Policy(DEADLINE, timedelta(hours=2)))[0]
    assert (within.commit, within.late_minutes) == (late, 90)
    beyond = fetched(tmp_path, tmp_path / "bo", Policy(DEADLINE, timedelta(hours=1)))[0]
    assert beyond.commit != late and beyond.late_minutes == 0
    newest, text = fetched(tmp_path, tmp_path / "bo", Policy(DEADLINE, latest=True))
    assert (newest.commit, newest.late_minutes, text) == (late, 90, LATE)


def test_no_commit_before_the_deadline_is_said(tmp_path: Path) -> None:
    commit(tmp_path / "cy", {f"{CROP}/solution.py": LATE}, DEADLINE + timedelta(days=2))
    source, text = fetched(tmp_path, tmp_path / "cy", Policy(DEADLINE))
    assert source.error is None and source.commit is None and text is None
    assert "no commit on the default branch by 2026-12-01T23:59:00+00:00" in source.notes[0]


def test_a_repository_is_read_as_data(tmp_path: Path) -> None:
    repo = tmp_path / "eve"
    commit(repo, {"problems/05-decode/solution.py": EARLY, ".gitattributes": "* filter=evil\n"},
           DEADLINE - timedelta(days=1),
           links={f"problems/{CROP}/solution.py": str(ROOT / "solutions" / CROP / "solution.py")})
    source, _ = fetched(tmp_path, repo, Policy(DEADLINE))
    hand_in = tmp_path / "hand-in" / "eve" / "problems"
    assert source.error is None, source.error
    assert (hand_in / "05-decode" / "solution.py").read_text() == EARLY
    assert not (hand_in / CROP / "solution.py").exists()  # a link is never made
    assert "links ignored: 1" in source.notes
    assert not (tmp_path / "hand-in" / "eve" / ".gitattributes").exists()
    # The gradebook then reads the hand-in as a folder, and says why a file is missing.
    assert read_solution(hand_in / CROP / "solution.py", hand_in) == (
        None, "a link, which is not followed in a repository or zip")
    assert read_solution(hand_in / "06-generate" / "solution.py", hand_in) == (
        None, "no such file")


def tree_bomb(repo: Path) -> None:
    """A repository of a few kilobytes whose trees name each other: a million paths (one
    blob, in a tree of 100, in 100 trees, in 100), beside a real solution."""
    commit(repo, {f"problems/{CROP}/solution.py": EARLY}, DEADLINE - timedelta(days=1))
    git = lambda *a, given="": subprocess.run(  # noqa: E731
        ["git", *a], cwd=repo, input=given, check=True, capture_output=True,
        text=True).stdout.strip()
    blob = git("hash-object", "-w", "--stdin", given="x")
    tree = git("mktree", given="".join(f"100644 blob {blob}\tf{i}\n" for i in range(100)))
    for _level in range(2):
        tree = git("mktree", given="".join(f"040000 tree {tree}\td{i}\n" for i in range(100)))
    head = git("write-tree")
    root = git("mktree", given=git("ls-tree", head) + f"\n040000 tree {tree}\tbomb\n")
    bomb = git("commit-tree", root, "-p", "HEAD", "-m", "bomb")
    git("update-ref", "refs/heads/main", bomb)


def test_a_tree_bomb_is_refused_while_git_lists_it(tmp_path: Path, monkeypatch) -> None:
    """git's listing is read as it comes and git is stopped at the entry limit: held
    whole, a repository of a few kilobytes can list more paths than memory holds."""
    tree_bomb(tmp_path / "mallory")
    started: list[subprocess.Popen] = []

    class Recorded(subprocess.Popen):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(repositories.subprocess, "Popen", Recorded)
    source, text = fetched(tmp_path, tmp_path / "mallory", Policy(DEADLINE, latest=True))
    assert text is None
    assert source.error is not None and "more than 20000 entries" in source.error
    listing = [p for p in started if "ls-tree" in p.args]
    assert len(listing) == 1 and listing[0].returncode == -9  # stopped, not run to its end


def test_local_repositories_only_when_allowed(tmp_path: Path) -> None:
    two_commits(tmp_path / "dan")
    source, text = fetched(tmp_path, tmp_path / "dan", Policy(DEADLINE), allow_local=False)
    assert text is None and "file://" in source.error
    for url in ("ext::sh -c touch% /tmp/x", "-uevil", "/srv/repo.git", "git://host/x",
                "fd::3", "ssh://-oProxyCommand=touch%20x/repo", "git@-oProxyCommand=x:repo",
                "https:///repo"):
        with pytest.raises(ValueError):
            check_url(url, allow_local=True)
    check_url("https://github.com/org/kata-ada", allow_local=False)
    check_url("git@github.com:org/kata-ada.git", allow_local=False)
    assert shown_url("https://ada:ghp_secret@github.com/org/kata") == "https://github.com/org/kata"
    assert shown_url("git@github.com:org/kata.git") == "git@github.com:org/kata.git"


def test_a_roster_in_github_classrooms_columns(tmp_path: Path) -> None:
    roster = tmp_path / "classroom_roster.csv"
    roster.write_text("identifier,github_username,github_id,name\n"
                      "ada@example.org,ada-l,101,Ada Lovelace\n"
                      "=cmd,bo,102,\n\n")
    entries = read_roster(roster, "https://github.com/course/kata-{github_username}")
    assert [(e.name, e.url) for e in entries] == [
        ("ada-l", "https://github.com/course/kata-ada-l"),
        ("bo", "https://github.com/course/kata-bo")]
    mine = tmp_path / "roster.csv"
    mine.write_text("learner,repository\nzoe,https://h/z\n.hidden,https://h/h\n")
    assert [(e.name, e.folder) for e in read_roster(mine, None)] == [
        (".hidden", "%2Ehidden"), ("zoe", "zoe")]
    mine.write_text("learner,repository\nzoe,https://h/z\nzoe,https://h/y\n")
    with pytest.raises(UsageError, match="twice"):
        read_roster(mine, None)
    with pytest.raises(UsageError, match="repository"):
        read_roster(roster, None)


def test_a_roster_whose_names_make_no_folder_on_windows_or_macos_is_refused_or_encoded(
        tmp_path: Path) -> None:
    # Each learner's hand-in folder is made before grading: `ada` after `Ada` is the
    # same folder where case is not told apart, and `con` or `bo.` none on Windows.
    roster = tmp_path / "roster.csv"
    roster.write_text("learner,repository\nAda,https://h/a\nada,https://h/b\n")
    with pytest.raises(UsageError, match="Ada and ada.*case or accents"):
        read_roster(roster, None)
    roster.write_text("learner,repository\ncon,https://h/c\nAux.x,https://h/x\n"
                      "bo.,https://h/b\nbo,https://h/o\n")
    entries = read_roster(roster, None)
    assert [e.name for e in entries] == ["Aux.x", "bo", "bo.", "con"]
    folders = [e.folder for e in entries]
    assert folders == ["%41ux.x", "bo", "bo%2E", "%63on"]
    for folder in folders:
        assert folder.partition(".")[0].upper() not in ("CON", "AUX")
        assert not folder.endswith((".", " "))


def test_a_roster_name_that_makes_no_file_name_keeps_its_row_name(tmp_path: Path) -> None:
    # `con` is a GitHub username Windows will not make a file of: its folder and reports
    # are `%63on`, once encoded, and its row still says `con`, as the LMS knows them.
    solved = (ROOT / "solutions" / CROP / "solution.py").read_text()
    commit(tmp_path / "repos" / "con", {f"problems/{CROP}/solution.py": solved},
           DEADLINE - timedelta(hours=3))
    roster = tmp_path / "roster.csv"
    roster.write_text("learner,repository\n"
                      f"con,file://{tmp_path / 'repos' / 'con'}\n"
                      f".dot,file://{tmp_path / 'repos' / 'nobody'}\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", "--roster", str(roster), "crop-context",
         "--allow-local-repos", "--allow-unisolated", "-q", "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 1, done.stderr[-3000:]  # .dot's repository does not exist
    with (out / "gradebook.csv").open(newline="") as handle:
        table = {row["learner"]: row for row in csv.DictReader(handle)}
    assert set(table) == {"con", ".dot"}
    assert table["con"]["crop-context"] == "pass" and table[".dot"]["crop-context"] == "error"
    assert json.loads((out / "%63on.json").read_text())["score"] == 10
    assert json.loads((out / "%2Edot.json").read_text())["status"] == "error"
    assert sorted(p.name for p in out.glob("[!.]*.json")) == ["%2Edot.json", "%63on.json"]
    assert sorted(p.name for p in (out / ".repos" / "hand-ins").iterdir()) == [
        "%2Edot", "%63on"]


def test_deadline_and_policy_options() -> None:
    assert deadline_spec("2026-12-01T23:59Z") == DEADLINE
    assert deadline_spec("2026-12-02T00:59+01:00") == DEADLINE
    # Z in either case, with seconds too, on every Python (3.10's fromisoformat reads no Z)
    assert deadline_spec("2026-12-01T23:59z") == DEADLINE
    assert deadline_spec("2026-12-01T23:59:30.000Z") == DEADLINE + timedelta(seconds=30)
    for wrong in ("2026-12-01T23:59", "tomorrow"):
        with pytest.raises(argparse.ArgumentTypeError):
            deadline_spec(wrong)
    assert policy_spec("grace:2h") == ("grace", timedelta(hours=2))
    assert policy_spec("cutoff") == ("cutoff", timedelta(0))
    with pytest.raises(argparse.ArgumentTypeError):
        policy_spec("penalty:10%")


def test_a_roster_of_repositories_is_graded_at_its_deadline(tmp_path: Path) -> None:
    solved = (ROOT / "solutions" / CROP / "solution.py").read_text()
    early = commit(tmp_path / "repos" / "ada", {f"problems/{CROP}/solution.py": solved},
                   DEADLINE - timedelta(hours=3))
    commit(tmp_path / "repos" / "ada", {f"problems/{CROP}/solution.py": "broken("},
           DEADLINE + timedelta(hours=3))
    roster = tmp_path / "roster.csv"
    commit(tmp_path / "repos" / "cy", {f"problems/{CROP}/solution.py": solved},
           DEADLINE + timedelta(hours=1))
    roster.write_text("learner,repository\n"
                      f"ada,file://{tmp_path / 'repos' / 'ada'}\n"
                      f"bo,file://{tmp_path / 'repos' / 'nobody'}\n"
                      f"cy,file://{tmp_path / 'repos' / 'cy'}\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", "--roster", str(roster), "crop-context",
         "--deadline", "2026-12-01T23:59Z", "--allow-local-repos", "--allow-unisolated",
         "--jobs", "2", "-q", "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 1, done.stderr[-3000:]  # bo's repository does not exist
    with (out / "gradebook.csv").open(newline="") as handle:
        table = {row["learner"]: row for row in csv.DictReader(handle)}
    assert table["ada"]["crop-context"] == "pass"
    assert table["ada"]["commit"] == early and table["ada"]["late_minutes"] == "0"
    assert table["bo"]["crop-context"] == "error" and table["bo"]["commit"] == ""
    ada = json.loads((out / "ada.json").read_text())
    assert ada["source"]["commit"] == early and ada["source"]["later_commits"] == 1
    # This run is the first to see ada's repository, after the deadline: the graded
    # commit's date is all it has to go on, and the note says so (tests/test_sightings.py).
    assert ada["source"]["notes"] == [
        f"commit {early[:12]} was first seen at {ada['source']['first_seen']}, after the "
        "deadline: its date is "
        "the committer's word (a run at the deadline, gradebook --fetch-only, records what "
        "was there)", "1 later commit not graded"]
    assert ada["source"]["first_seen"] is not None
    # The table says it too: an instructor reads the file, not every learner's JSON.
    assert table["ada"]["note"].startswith("; ".join(ada["source"]["notes"])), table["ada"]
    bo = json.loads((out / "bo.json").read_text())
    assert bo["status"] == "error" and "could not be read" in bo["message"]
    # Not graded, out of the same total as the class, and why is the clone's failure.
    assert table["bo"]["score"] == "0" and table["bo"]["max_score"] == "10"
    assert bo["max_score"] == 10 and bo["problems"][0]["status"] == "error"
    # No commit by the deadline: graded as missing, and the row says why first.
    assert table["cy"]["crop-context"] == "missing" and table["cy"]["max_score"] == "10"
    cy = json.loads((out / "cy.json").read_text())
    assert cy["notes"][0].startswith("no commit on the default branch by"), cy["notes"]
    assert table["cy"]["note"].count("no commit on the default branch by") == 1, table["cy"]

    # Run again, nothing changed: the reports kept from the first run say the same.
    again = subprocess.run(done.args, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert again.returncode == 1, again.stderr[-3000:]
    assert json.loads((out / "ada.json").read_text())["source"] == ada["source"]
    assert (out / "gradebook.csv").read_text().splitlines()[0].count("commit") == 1


def test_a_commit_at_the_deadline_itself_counts(tmp_path: Path) -> None:
    commit(tmp_path / "fay", {f"{CROP}/solution.py": EARLY}, DEADLINE - timedelta(days=1))
    on_time = commit(tmp_path / "fay", {f"{CROP}/solution.py": LATE}, DEADLINE)
    commit(tmp_path / "fay", {f"{CROP}/solution.py": "late"}, DEADLINE + timedelta(seconds=1))
    source, _ = fetched(tmp_path, tmp_path / "fay", Policy(DEADLINE))
    assert (source.commit, source.late_minutes, source.later_commits) == (on_time, 0, 1)


def test_a_roster_in_classroom50s_columns(tmp_path: Path) -> None:
    # Classroom50's roster.csv, as its config repository holds it: a BOM from Excel, a
    # teacher and a TA beside the learners, an invitation by email not yet taken up,
    # and a column of the instructor's own after role.
    roster = tmp_path / "roster.csv"
    roster.write_text("\ufeffusername,first_name,last_name,email,section,github_id,role,team\n"
                      "ada-l,Ada,Lovelace,ada@example.org,A,101,student,red\n"
                      "prof,Pat,Prof,pat@example.org,,102,teacher,\n"
                      "helper,Tam,Assist,tam@example.org,A,103,ta,\n"
                      ",Cy,Pending,cy@example.org,B,,,\n"
                      "bo,Bo,,,B,104,,blue\n", encoding="utf-8")
    entries = read_roster(roster, "https://github.com/course/{learner}-kata")
    assert [(e.name, e.url, e.problem is None) for e in entries] == [
        ("ada-l", "https://github.com/course/ada-l-kata", True),
        ("bo", "https://github.com/course/bo-kata", True),
        ("cy@example.org", "", False)]
    assert "invited by email" in (entries[2].problem or "")
    # A file written before Classroom50 added role reads the same.
    roster.write_text("username,first_name,last_name,email,section,github_id\n"
                      "ada-l,Ada,Lovelace,ada@example.org,A,101\n")
    (ada,) = read_roster(roster, "https://github.com/course/kata-{username}")
    assert ada.url == "https://github.com/course/kata-ada-l"


def test_a_github_classroom_learner_with_no_account_keeps_a_row(tmp_path: Path) -> None:
    roster = tmp_path / "classroom_roster.csv"
    roster.write_text('"identifier","github_username","github_id","name"\n'
                      '"s1001","ada-l","101","Ada Lovelace"\n'
                      '"s1002","","",""\n')
    entries = read_roster(roster, "https://github.com/course/kata-{github_username}")
    assert [(e.name, e.url) for e in entries] == [
        ("ada-l", "https://github.com/course/kata-ada-l"), ("s1002", "")]
    assert "no GitHub account" in (entries[1].problem or "")


@pytest.mark.parametrize("header", ["student,repo_link", "name,email", "", "identifier,name"])
def test_a_header_it_does_not_know_names_what_it_found_and_expects(
        header: str, tmp_path: Path) -> None:
    roster = tmp_path / "roster.csv"
    roster.write_text(f"{header}\nada,https://h/a\n" if header else "")
    with pytest.raises(UsageError) as raised:
        read_roster(roster, "https://h/{learner}")
    message = str(raised.value)
    assert f"found {header or 'nothing'};" in message
    for expected in ("learner,repository", "identifier,github_username,github_id,name",
                     "username,first_name,last_name,email,section,github_id,role"):
        assert expected in message


def test_a_learner_with_no_repository_gets_an_error_row(tmp_path: Path) -> None:
    # Graded with no problem fetched: the gradebook still writes their row and report.
    roster = tmp_path / "classroom_roster.csv"
    roster.write_text("identifier,github_username,github_id,name\ns1002,,,\n")
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", "--roster", str(roster), "crop-context",
         "--repo-url", "https://github.invalid/{github_username}", "--allow-unisolated",
         "-q", "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 1, done.stderr[-3000:]
    with (out / "gradebook.csv").open(newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["learner"] == "s1002" and row["crop-context"] == "error"
    report = json.loads((out / "s1002.json").read_text())
    assert report["status"] == "error" and "no GitHub account" in report["message"]


def test_what_git_said_is_kept_whole_on_one_line() -> None:
    from grader.classroom.gradebook.repositories import GIT_SAID_CHARS, git_says

    said = (b"hint: Using 'master' as the name for the initial branch.\n"
            b"fatal: Could not read from remote repository.\n\n"
            b"Please make sure you have the correct access rights\n"
            b"and the repository exists.\n")
    assert git_says(said) == ("fatal: Could not read from remote repository. Please make sure "
                              "you have the correct access rights and the repository exists.")
    # What a hostile server sends is shown, never obeyed by the terminal, and bounded.
    hostile = git_says(b"fatal: \x1b[2J\x1b]0;owned\x07" + b"x" * 5000)
    assert "\x1b" not in hostile and "\x07" not in hostile
    assert len(hostile) == GIT_SAID_CHARS and hostile.endswith("…")
    assert git_says(b"") == "it said nothing"


def test_an_extension_is_a_learners_own_deadline(tmp_path: Path) -> None:
    # ada and bo both commit a day after the class's deadline; ada has two more days.
    solved = (ROOT / "solutions" / CROP / "solution.py").read_text()
    for name in ("ada", "bo"):
        commit(tmp_path / "repos" / name, {f"problems/{CROP}/solution.py": solved},
               DEADLINE + timedelta(days=1))
    roster = tmp_path / "roster.csv"
    roster.write_text("learner,repository\n" + "".join(
        f"{name},file://{tmp_path / 'repos' / name}\n" for name in ("ada", "bo")))
    extensions = tmp_path / "extensions.csv"
    extensions.write_text("learner,deadline\nada,2026-12-03T23:59Z\n")
    out = tmp_path / "out"
    command = [sys.executable, "-m", "grader", "gradebook", "--roster", str(roster),
               "crop-context", "--deadline", "2026-12-01T23:59Z", "--late-policy",
               "latest", "--late-penalty", "10%/day", "--extensions", str(extensions),
               "--allow-local-repos", "--allow-unisolated", "-q", "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    with (out / "gradebook.csv").open(newline="") as handle:
        table = {row["learner"]: row for row in csv.DictReader(handle)}
    # On time by ada's own deadline, and the row says whose deadline that was.
    assert (table["ada"]["late_minutes"], table["ada"]["score"]) == ("0", "10")
    assert table["ada"]["note"].startswith("an extension: their deadline is 2026-12-03T23:59"), \
        table["ada"]
    ada = json.loads((out / "ada.json").read_text())
    assert ada["source"]["deadline"].startswith("2026-12-03T23:59") and "late" not in ada
    # bo is a day late by the class's, and loses a tenth.
    assert (table["bo"]["late_minutes"], table["bo"]["score"]) == (str(24 * 60), "9")
    assert "extension" not in table["bo"]["note"]

    # A name not on the roster, or a deadline without a zone, is refused before any clone.
    for text, says in (("learner,deadline\nada,2026-12-03T23:59Z\nadda,2026-12-03T23:59Z\n",
                        "line 3: adda is not on the roster"),
                       ("learner,deadline\nada,2026-12-03T23:59\n", "line 2: "),
                       ("name,until\nada,2026-12-03T23:59Z\n", "expected learner,deadline")):
        extensions.write_text(text)
        refused = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr[-2000:]
