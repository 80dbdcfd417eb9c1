"""A deadline is judged on what the gradebook saw, not on the dates commits claim.

A commit backdated with GIT_COMMITTER_DATE and pushed after a gradebook run that came
after the deadline is not graded as on time: the gradebook records, per learner, the
commits each run found (DIR/.repos/sightings.json)."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta
from pathlib import Path

from test_roster import CROP, DEADLINE, EARLY, LATE, commit, two_commits

from grader.classroom.gradebook.repositories import Entry, Policy, fetch
from grader.classroom.gradebook.sightings import SIGHTINGS_FILE, Sightings
from grader.cli.main import main

BACKDATED = "class Solution:\n    backdated = True\n"


def fetched(tmp_path: Path, repo: Path, policy: Policy, sightings: Sightings, now):
    hand_in = tmp_path / "hand-in" / f"{repo.name}-{now.timestamp():.0f}"
    shutil.rmtree(hand_in, ignore_errors=True)  # as each run starts afresh
    source = fetch(Entry(repo.name, f"file://{repo}"), tmp_path / "clones", hand_in, policy,
                   True, sightings, now)
    solution = hand_in / "problems" / CROP / "solution.py"
    return source, solution.read_text() if solution.exists() else None


def test_a_commit_backdated_after_a_run_past_the_deadline_is_not_on_time(tmp_path) -> None:
    repo = tmp_path / "ada"
    early = commit(repo, {f"problems/{CROP}/solution.py": EARLY}, DEADLINE - timedelta(days=1))
    sightings = Sightings.load(tmp_path / "record")
    cutoff = Policy(DEADLINE)
    source, text = fetched(tmp_path, repo, cutoff, sightings, DEADLINE + timedelta(minutes=5))
    assert source.commit == early and text == EARLY
    # Pushed after that run, dated a minute before the deadline.
    backdated = commit(repo, {f"problems/{CROP}/solution.py": BACKDATED},
                       DEADLINE - timedelta(minutes=1))
    source, text = fetched(tmp_path, repo, cutoff, sightings, DEADLINE + timedelta(days=1))
    assert source.commit == early and text == EARLY
    assert any(backdated[:12] in note and "not graded as on time" in note
               for note in source.notes), source.notes
    # Under the latest policy it is graded, as late as the run that had not seen it.
    latest = Policy(DEADLINE, latest=True)
    source, text = fetched(tmp_path, repo, latest, sightings, DEADLINE + timedelta(days=2))
    assert source.commit == backdated and text == BACKDATED
    assert source.late_minutes == 5
    assert any("not in the repository at" in note for note in source.notes)
    assert not any("late by its date" in note for note in source.notes), source.notes


def test_a_late_commit_that_no_run_bounds_is_late_by_its_date_and_says_so(tmp_path) -> None:
    repo = tmp_path / "dee"
    late = commit(repo, {f"problems/{CROP}/solution.py": LATE}, DEADLINE + timedelta(hours=1))
    sightings = Sightings.load(tmp_path / "record")
    source, text = fetched(tmp_path, repo, Policy(DEADLINE, latest=True), sightings,
                           DEADLINE + timedelta(days=1))
    assert source.commit == late and text == LATE and source.late_minutes == 60
    assert any(f"commit {late[:12]} is late by its date, which its committer sets" in note
               for note in source.notes), source.notes


def test_a_commit_seen_at_the_deadline_counts_and_a_first_run_says_what_it_trusts(
        tmp_path) -> None:
    repo = tmp_path / "ben"
    early, _late = two_commits(repo)
    sightings = Sightings.load(tmp_path / "record")
    # The first run after the deadline can only take the dates' word, and says so.
    source, text = fetched(tmp_path, repo, Policy(DEADLINE), sightings,
                           DEADLINE + timedelta(hours=3))
    assert source.commit == early and text == EARLY
    assert any("committer's word" in note for note in source.notes), source.notes
    # A record from a run at the deadline: the early commit was there, so it counts.
    watched = Sightings.load(tmp_path / "watched")
    fetched(tmp_path, repo, Policy(DEADLINE), watched, DEADLINE)
    source, text = fetched(tmp_path, repo, Policy(DEADLINE), watched,
                           DEADLINE + timedelta(hours=3))
    assert source.commit == early and text == EARLY
    assert not any("committer's word" in note for note in source.notes), source.notes
    assert source.first_seen == "2026-12-01T23:59:00Z"


def test_the_record_survives_a_reload_and_a_corrupt_one_is_ignored(tmp_path) -> None:
    sightings = Sightings.load(tmp_path)
    sightings.record("ada", "https://example.org/a", ["a1", "a2"], DEADLINE)
    sightings.record("ada", "https://example.org/a", ["a1", "a2", "a3"],
                     DEADLINE + timedelta(hours=1))
    sightings.save()
    again = Sightings.load(tmp_path)
    assert again.absent_at("ada", "a3") == DEADLINE
    assert again.absent_at("ada", "a1") is None
    # Another repository for the same learner starts afresh.
    again.record("ada", "https://example.org/other", ["b1"], DEADLINE + timedelta(hours=2))
    assert again.absent_at("ada", "a3") is None
    for bad in ("{", '{"version": 1, "learners": {"ada": {"url": 3}}}', "[]"):
        (tmp_path / SIGHTINGS_FILE).write_text(bad, encoding="utf-8")
        assert Sightings.load(tmp_path).learners == {}


def test_fetch_only_records_and_grades_nothing(tmp_path, capsys) -> None:
    repo = tmp_path / "cy"
    commit(repo, {f"problems/{CROP}/solution.py": LATE}, DEADLINE - timedelta(hours=1))
    roster = tmp_path / "roster.csv"
    roster.write_text(f"learner,repository\ncy,file://{repo}\n", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["gradebook", "--roster", str(roster), CROP, "--out", str(out),
                 "--fetch-only", "--allow-local-repos", "--allow-unisolated", "-q"])
    assert code == 0
    assert "nothing was graded" in capsys.readouterr().out
    record = json.loads((out / ".repos" / SIGHTINGS_FILE).read_text(encoding="utf-8"))
    assert list(record["learners"]) == ["cy"]
    assert not (out / "gradebook.csv").exists()
