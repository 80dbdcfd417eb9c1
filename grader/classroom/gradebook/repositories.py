"""`gpt-kata gradebook --roster roster.csv [--deadline T] --out DIR`: grade a class
of git repositories, each at the commit a deadline picks.

The roster is a CSV file with a header (roster_csv.py): gpt-kata's own
(`learner`, `repository`), GitHub Classroom's classroom_roster.csv or Classroom50's
roster.csv; with `--repo-url TEMPLATE`, each URL is made from the row, such as
`https://github.com/ORG/gpt-kata-{learner}`.

Each repository is cloned afresh into DIR/.repos/ as a bare, blobless clone (its
history of commits and trees, no file contents until read; a shallow clone
cannot be used, since the last commit before the deadline may be anywhere in the
history). The commit is chosen on the default branch by `--late-policy`, its
solution files are read as data (`git ls-tree` and `git cat-file`, never a
checkout, so no hook, filter, link or submodule of the learner's is ever made
or run) into a folder per learner, and the gradebook grades those folders. Each
learner's report then gets `source` (repository, commit, when it was committed,
how late), and gradebook.csv the columns `commit`, `late_minutes` and
`late_penalty`. `--late-penalty` takes its share of a late hand-in's score
(reports/late.py), in the report and so in every output made from it.

Git runs as for a hostile repository: no terminal prompts, no hooks, no
symlinks, only https and ssh (file:// only with --allow-local-repos), a time
limit per command and a limit on the size of any file it writes.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from grader.classroom.gradebook import layouts
from grader.classroom.gradebook.roster_csv import Entry, read_extensions, read_roster
from grader.classroom.gradebook.sightings import Sightings, iso
from grader.grading.values.sanitise import visible
from grader.learner.errors import EXIT_FAIL, UsageError
from grader.learner.options import add_late_penalty_options
from grader.locale import tr
from grader.reports.late import LatePenalty

GIT_SECONDS = 300  # one git command; a clone of a kata takes seconds
GIT_MAX_FILE_BYTES = 500_000_000  # no file git writes (a pack) may be larger
REPOS = ".repos"
GIT_SAID_CHARS = 400  # of git's message, in a report and a row


@dataclass
class Policy:
    """Which commit counts: the last one at or before deadline + grace, or (latest)
    the newest. A commit after the deadline is graded as late, by how much is said."""
    deadline: datetime | None
    grace: timedelta = timedelta(0)
    latest: bool = False
    extended: bool = False  # the deadline is the learner's own (--extensions)


@dataclass
class Source:
    url: str
    commit: str | None = None
    committed: str | None = None  # ISO 8601, UTC, the committer's date
    late_minutes: int | None = None
    later_commits: int = 0  # commits on the branch after the graded one
    first_seen: str | None = None  # when a gradebook run first found the graded commit
    # Why nothing was handed in (no commit by the deadline, say), "" if something was:
    # the learner's row says it first, since their folder is empty for that reason.
    nothing_handed_in: str = ""
    error: str | None = None  # the repository could not be read: the row is an error
    notes: list[str] | None = None

    def as_report(self, policy: Policy) -> dict:
        notes = [visible(n) for n in self.notes or []]
        if policy.extended and policy.deadline is not None:
            notes.insert(0, tr("an extension: their deadline is {time}",
                               time=iso(policy.deadline)))
        if self.later_commits:
            notes.append(tr("1 later commit not graded") if self.later_commits == 1 else
                         tr("{count} later commits not graded", count=self.later_commits))
        return {"repository": visible(shown_url(self.url)), "commit": self.commit,
                "committed": self.committed,
                "deadline": policy.deadline.isoformat() if policy.deadline else None,
                "late_minutes": self.late_minutes, "later_commits": self.later_commits,
                "first_seen": self.first_seen,
                "notes": notes}


# -- the roster and the policy -----------------------------------------------------------

def deadline_spec(text: str) -> datetime:
    """An argparse type: an ISO 8601 time with its zone, e.g. 2026-12-01T23:59Z."""
    # datetime.fromisoformat reads a trailing Z (UTC) only from Python 3.11, and z on none
    read = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
    try:
        moment = datetime.fromisoformat(read)
    except ValueError:
        raise argparse.ArgumentTypeError(tr("{text!r}: a time such as 2026-12-01T23:59Z",
                                            text=text)) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(tr("{text!r}: say its time zone (Z, +01:00, ...)",
                                            text=text))
    # Far enough from the ends of the calendar that a grace period added to it, or the
    # time zone taken from it, stays a date.
    if not 1970 <= moment.year <= 9000:
        raise argparse.ArgumentTypeError(tr("{text!r}: a deadline between 1970 and 9000",
                                            text=text))
    return moment.astimezone(timezone.utc)


# Longer than any course; the deadline plus the grace stays a date a clock can show.
MAX_GRACE = timedelta(days=3650)


def policy_spec(text: str) -> tuple[str, timedelta]:
    """An argparse type: cutoff, latest, or grace:DURATION (30m, 2h, 1d)."""
    if text in ("cutoff", "latest"):
        return text, timedelta(0)
    match = re.fullmatch(r"grace:(\d+)([mhd])", text)
    if not match:
        raise argparse.ArgumentTypeError(tr("{text!r}: cutoff, latest, or grace:N followed "
                                            "by m, h or d (e.g. grace:2h)", text=text))
    unit = {"m": "minutes", "h": "hours", "d": "days"}[match[2]]
    grace = timedelta(**{unit: int(match[1])}) if len(match[1]) <= 6 else None
    if grace is None or grace > MAX_GRACE:
        raise argparse.ArgumentTypeError(tr("{text!r}: a grace period of at most {days} days",
                                            text=text, days=MAX_GRACE.days))
    return "grace", grace


def late_penalty(args: argparse.Namespace, kind: str = "") -> LatePenalty | None:
    """The penalty asked for, checked against the policy it goes with (none for the
    Gradescope bundle's, which goes by Gradescope's due dates)."""
    rate = getattr(args, "late_penalty", None)
    if rate is None:
        if getattr(args, "late_penalty_max", 100) != 100:
            raise UsageError(tr("--late-penalty-max caps a --late-penalty: give that too"))
        return None
    if kind == "cutoff":
        raise UsageError(tr("--late-penalty needs --late-policy grace:... or latest: under "
                            "cutoff, no commit after the deadline is graded"))
    return replace(rate, most=args.late_penalty_max)


# -- git, run as for a hostile repository -------------------------------------------------

def shown_url(url: str) -> str:
    """The URL without a user name or token in it, for reports and the terminal."""
    parts = urlsplit(url)
    if parts.scheme and "@" in parts.netloc:
        return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
    return url


def check_url(url: str, allow_local: bool) -> None:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if url.startswith("-"):
        raise ValueError("a repository URL may not start with '-'")
    # A host starting with '-' would reach ssh as an option (-oProxyCommand=...).
    if scheme in ("https", "ssh") and re.fullmatch(r"\w[\w.-]*", parts.hostname or ""):
        return
    if re.fullmatch(r"\w[\w.-]*@\w[\w.-]*:[\w./~-]+", url):  # git@github.com:org/repo.git
        return
    if scheme == "file" and allow_local:
        return
    raise ValueError("only https:// and ssh repositories are cloned "
                     "(file:// with --allow-local-repos)")


def limit_files() -> None:  # runs in git's process, before it starts
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (GIT_MAX_FILE_BYTES, GIT_MAX_FILE_BYTES))


def git_command(args: list[str], allow_local: bool) -> list[str]:
    settings = {"core.hooksPath": os.devnull, "core.symlinks": "false",
                "core.fsmonitor": "false", "submodule.recurse": "false",
                "protocol.allow": "never", "protocol.https.allow": "always",
                "protocol.ssh.allow": "always",
                "protocol.file.allow": "always" if allow_local else "never"}
    return ["git", *(f for k, v in settings.items() for f in ("-c", f"{k}={v}")), *args]


def git_started() -> dict[str, Any]:
    """How every git is started: no prompt, no system config, no input, its files limited."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    return {"env": env, "stdin": subprocess.DEVNULL,
            "preexec_fn": limit_files if os.name == "posix" else None}


def git(args: list[str], allow_local: bool, text: bool = True) -> str:
    try:
        done = subprocess.run(git_command(args, allow_local), capture_output=True,
                              timeout=GIT_SECONDS, **git_started())
    except subprocess.TimeoutExpired:
        raise RuntimeError(tr("git {command} took longer than {seconds} s", command=args[0],
                                  seconds=GIT_SECONDS)) from None
    except OSError as exc:
        raise RuntimeError(tr("git could not run ({error})", error=exc.strerror)) from None
    if done.returncode != 0:
        raise RuntimeError(tr("git {command} failed: {error}", command=args[0],
                               error=git_says(done.stderr)))
    return done.stdout.decode(errors="replace") if text else done.stdout


def git_says(stderr: bytes) -> str:
    """What git said when it failed, on one line: every line but its hints, since its
    message often runs over several ("Could not read from remote repository. / Please
    make sure you have the correct access rights / and the repository exists.")."""
    lines = [line.strip() for line in stderr.decode(errors="replace").splitlines()]
    said = " ".join(line for line in lines if line and not line.startswith("hint:"))
    said = visible(said) or "it said nothing"
    return said if len(said) <= GIT_SAID_CHARS else said[:GIT_SAID_CHARS - 1] + "…"


def read_blob(repo: Path, sha: str, allow_local: bool) -> Callable[[int], bytes]:
    def read(limit: int) -> bytes:
        # The whole blob is never held: at most `limit` bytes of it are read.
        process = subprocess.Popen(
            git_command(["--git-dir", str(repo), "cat-file", "blob", sha], allow_local),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, **git_started())
        try:
            assert process.stdout is not None
            return process.stdout.read(limit)
        finally:
            process.kill()
            process.wait(GIT_SECONDS)
    return read


def tree_members(repo: Path, commit: str, allow_local: bool) -> Iterator[layouts.Member]:
    """The commit's entries, as git lists them, read as they come.

    A tree that names another twice lists its paths twice, so a repository of a few
    kilobytes can list billions of paths: held whole, the listing of one learner's
    44 KB repository would take more memory than the machine has. layouts.unpack
    stops at MAX_ENTRIES, and git is stopped with it."""
    for record in listed(repo, ["ls-tree", "-r", "-t", "-z", "--full-tree", commit],
                         allow_local):
        meta, _, path = record.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        name = os.fsdecode(path)
        if kind == "tree":
            yield layouts.Member(name, "dir")
        elif kind == "blob" and mode in ("100644", "100755"):
            yield layouts.Member(name, "file", read_blob(repo, sha, allow_local))
        else:  # 120000: a link; a commit: a submodule
            yield layouts.Member(name, "link" if mode == "120000" else "other")


def listed(repo: Path, args: list[str], allow_local: bool) -> Iterator[bytes]:
    """The NUL-ended records `git args` prints in `repo`, one at a time; git is ended when
    the caller stops reading, and after GIT_SECONDS. Raises RuntimeError as `git` does."""
    with tempfile.TemporaryFile() as said:
        try:
            process = subprocess.Popen(
                git_command(["--git-dir", str(repo), *args], allow_local),
                stdout=subprocess.PIPE, stderr=said, **git_started())
        except OSError as exc:
            raise RuntimeError(tr("git could not run ({error})", error=exc.strerror)) from None
        timed_out: list[bool] = []
        timer = threading.Timer(GIT_SECONDS, lambda: (timed_out.append(True), process.kill()))
        timer.start()
        try:
            assert process.stdout is not None
            rest = b""
            while chunk := process.stdout.read(1 << 16):
                *records, rest = (rest + chunk).split(b"\0")
                yield from (record for record in records if record)
            code = process.wait()
        finally:
            timer.cancel()
            timer.join()  # no thread outlives the listing
            process.kill()
            process.wait()
        if timed_out:
            raise RuntimeError(tr("git {command} took longer than {seconds} s", command=args[0],
                                  seconds=GIT_SECONDS))
        if code != 0:
            said.seek(0)
            raise RuntimeError(tr("git {command} failed: {error}", command=args[0],
                                   error=git_says(said.read(1 << 16))))


def fetch(entry: Entry, repos: Path, hand_in: Path, policy: Policy,
          allow_local: bool, sightings: Sightings | None = None,
          now: datetime | None = None) -> Source:
    """Clone the learner's repository, choose the commit, write its solutions. With
    `sightings`, record which commits this run (at `now`) found, and judge the
    deadline on when each commit was first seen as well as on its date."""
    source = Source(entry.url)
    now = now or datetime.now(timezone.utc)
    repo = repos / f"{entry.folder}.git"
    shutil.rmtree(repo, ignore_errors=True)
    hand_in.mkdir(parents=True)
    try:
        check_url(entry.url, allow_local)
        git(["clone", "--bare", "--filter=blob:none", "--no-tags", "--quiet", "--",
             entry.url, str(repo)], allow_local)
        base = ["--git-dir", str(repo)]
        try:
            newest = git([*base, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
                         allow_local).strip()
        except RuntimeError:
            source.nothing_handed_in = tr("the repository has no commits")
            source.notes = [source.nothing_handed_in]
            return source
        # Every commit on the branch, newest first by committer date, as --before reads.
        history = [(line.split()[0], int(line.split()[1])) for line in git(
            [*base, "log", "--format=%H %ct", newest], allow_local).splitlines()
            if line.strip()]
        if sightings is not None:
            sightings.record(entry.folder, entry.url, [sha for sha, _ in history], now)
        notes: list[str] = []
        commit = newest
        if policy.deadline is not None and not policy.latest:
            cutoff = (policy.deadline + policy.grace).timestamp()
            chosen = on_time(entry.folder, history, cutoff, sightings, notes)
            if chosen is None:
                source.nothing_handed_in = tr(
                    "no commit on the default branch by {time}",
                    time=(policy.deadline + policy.grace).isoformat())
                source.notes = [*notes, source.nothing_handed_in]
                return source
            commit = chosen
        stamp = dict(history)[commit]
        source.commit = commit
        source.committed = datetime.fromtimestamp(stamp, timezone.utc).isoformat()
        source.later_commits = int(git([*base, "rev-list", "--count", f"{commit}..{newest}"],
                                       allow_local))
        pushed = stamp
        if sightings is not None:
            seen = sightings.first_seen(entry.folder, commit)
            source.first_seen = iso(seen) if seen else None
            absent = sightings.absent_at(entry.folder, commit)
            if absent is not None and absent.timestamp() > stamp:
                pushed = int(math.ceil(absent.timestamp()))  # pushed after that run
                notes.append(tr("commit {commit} is dated {dated}, but it was not in the "
                                "repository at {absent}: it is judged as pushed after that",
                                commit=commit[:12], dated=iso_stamp(stamp), absent=iso(absent)))
            elif (absent is None and seen is not None and policy.deadline is not None
                  and seen.timestamp() > policy.deadline.timestamp() >= stamp):
                # When, not "by this run": a later run says the same of it.
                notes.append(tr("commit {commit} was first seen at {seen}, after the deadline: "
                                "its date is the committer's word (a run at the deadline, "
                                "gradebook --fetch-only, records what was there)",
                                commit=commit[:12], seen=iso(seen)))
        if policy.deadline is not None:
            late = pushed - policy.deadline.timestamp()
            source.late_minutes = math.ceil(late / 60) if late > 0 else 0
            if late > 0 and pushed == stamp:  # no run's record bounds it
                notes.append(tr("commit {commit} is late by its date, which its committer sets "
                                "(runs of gradebook --fetch-only after the deadline record "
                                "when it was not there yet)", commit=commit[:12]))
        # A repository's .git* files are no news; links and the like are.
        source.notes = notes + layouts.unpack(tree_members(repo, commit, allow_local),
                                              hand_in, hidden_noted=False)
    except (RuntimeError, ValueError, OSError) as exc:
        source.error = tr("{url} could not be read: {error}", url=shown_url(entry.url), error=exc)
    return source


def on_time(learner: str, history: list[tuple[str, int]], cutoff: float,
            sightings: Sightings | None, notes: list[str]) -> str | None:
    """The newest commit dated by `cutoff` that no run after `cutoff` found missing;
    each one passed over for that is named in `notes`."""
    for sha, stamp in history:
        if stamp > cutoff:
            continue
        absent = sightings.absent_at(learner, sha) if sightings is not None else None
        if absent is not None and absent.timestamp() > cutoff:
            notes.append(tr("commit {commit} is dated {dated}, before the deadline, but was "
                            "not in the repository at {absent}, after it: not graded as on "
                            "time", commit=sha[:12], dated=iso_stamp(stamp), absent=iso(absent)))
            continue
        return sha
    return None


def iso_stamp(stamp: int) -> str:
    return iso(datetime.fromtimestamp(stamp, timezone.utc))


# -- the command -----------------------------------------------------------------------------

def gradebook_of_repositories(args: argparse.Namespace,
                              grade_folders: Callable[[argparse.Namespace], int]) -> int:
    from grader.classroom.gradebook.shards import shard_of

    if args.roster is not None:  # with --roster FILE, every word given is a problem
        args.problems = [args.roster, *args.problems]
        args.roster = None
    kind, grace = args.late_policy or ("cutoff", timedelta(0))
    if args.late_policy and args.deadline is None:
        raise UsageError(tr("--late-policy needs a --deadline"))
    penalty = late_penalty(args, kind)
    policy = Policy(args.deadline, grace, latest=kind == "latest")
    entries = read_roster(Path(args.roster_file), args.repo_url)
    policies = {e.name: policy for e in entries}
    if getattr(args, "extensions", None):
        if args.deadline is None:
            raise UsageError(tr("--extensions gives learners their own deadlines: give the "
                                "class's with --deadline"))
        own = read_extensions(Path(args.extensions), set(policies), deadline_spec)
        policies |= {name: replace(policy, deadline=deadline, extended=True)
                     for name, deadline in own.items()}
    # Mistakes the gradebook would find only after every clone, found now.
    from grader.learner.options import require_isolation, select_problems

    select_problems(args.problems)
    require_isolation(argparse.Namespace(classroom=True, allow_unisolated=args.allow_unisolated))
    out = Path(args.out)
    repos, hand_ins = out / REPOS / "clones", out / REPOS / "hand-ins"
    shutil.rmtree(hand_ins, ignore_errors=True)  # this run's commits only
    repos.mkdir(parents=True, exist_ok=True)
    hand_ins.mkdir(parents=True)
    # Every learner gets a folder, so the gradebook deals the same shards; only this
    # shard's repositories are fetched.
    mine = {e.name for e in entries}
    if args.shard is not None:
        mine = set(shard_of({e.name: Path(e.folder) for e in entries}, *args.shard))
    sightings = Sightings.load(out / REPOS)
    now = datetime.now(timezone.utc)
    sources: dict[str, Source] = {}
    for entry in entries:
        if entry.name not in mine:
            (hand_ins / entry.folder).mkdir()
            continue
        if not args.quiet:
            print(tr("fetching {name}: {url}", name=visible(entry.name),
                     url=visible(shown_url(entry.url))), file=sys.stderr)
        if entry.problem is not None:  # on the roster with no repository: a row that says why
            (hand_ins / entry.folder).mkdir()
            sources[entry.name] = Source(entry.url, error=f"{entry.name}: {entry.problem}")
            continue
        sources[entry.name] = fetch(entry, repos, hand_ins / entry.folder, policies[entry.name],
                                    args.allow_local_repos, sightings, now)
    sightings.save()
    if getattr(args, "fetch_only", False):
        failed = [name for name, source in sources.items() if source.error]
        for name in failed:
            print(f"gpt-kata gradebook: {visible(name)}: {sources[name].error}",
                  file=sys.stderr)
        print(tr("recorded what {count} repositories held at {time} in {file}; nothing was "
                 "graded", count=len(sources) - len(failed), time=iso(now),
                 file=sightings.path))
        return EXIT_FAIL if failed else 0
    # A repository that could not be read is its learner's row, with why; what the
    # fetch found (no commit by the deadline) comes before how the folder was read.
    causes = {name: source.error for name, source in sources.items() if source.error}
    fetch_notes = {name: [visible(source.nothing_handed_in)]
                   for name, source in sources.items() if source.nothing_handed_in}
    # The rows are named as the roster names them, the folders and reports as files.
    graded = argparse.Namespace(**{**vars(args), "roster": str(hand_ins), "roster_file": None,
                                   "learners": {e.name: hand_ins / e.folder for e in entries},
                                   "causes": causes, "fetch_notes": fetch_notes,
                                   "hand_ins": hand_ins_of(sources, policies, penalty)})
    code = grade_folders(graded)
    return EXIT_FAIL if causes and code == 0 else code


def hand_ins_of(sources: dict[str, Source], policies: dict[str, Policy],
                penalty: LatePenalty | None) -> dict[str, dict]:
    """Per learner fetched, what their report and row say of it: `source`, and the
    late penalty its lateness (from their own deadline) incurs (reports/late.py), if any."""
    found = {}
    for name, source in sources.items():
        late = None
        if penalty is not None and source.late_minutes:
            late = penalty.entry(source.late_minutes)
        found[name] = {"source": source.as_report(policies[name]), "late": late}
    return found


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--roster", dest="roster_file", metavar="FILE",
                   help=tr("grade git repositories instead: a CSV of learners and their "
                           "repositories (learner,repository), GitHub Classroom's "
                           "classroom_roster.csv or Classroom50's roster.csv"))
    p.add_argument("--repo-url", metavar="TEMPLATE",
                   help=tr("with --roster: each repository's URL from its row, e.g. "
                           "https://github.com/ORG/gpt-kata-{learner} ({learner}: the "
                           "learner's GitHub username, or any column of the row)"))
    p.add_argument("--deadline", type=deadline_spec, metavar="TIME",
                   help=tr("with --roster: grade the last commit at or before TIME "
                           "(ISO 8601 with a zone, e.g. 2026-12-01T23:59Z)"))
    p.add_argument("--late-policy", type=policy_spec, metavar="POLICY",
                   help=tr("cutoff (default: nothing after the deadline counts), grace:2h "
                           "(commits up to 2 h late count, marked late), or latest (the "
                           "newest commit, marked late if it is)"))
    add_late_penalty_options(p, tr(
        "take RATE of a late hand-in's points for each unit begun (with --late-policy "
        "grace:... or latest; the reports say how late), e.g. 10%%/day, 2%%/h (default: "
        "none)"))
    p.add_argument("--extensions", metavar="FILE",
                   help=tr("with --roster and --deadline: a CSV of learner,deadline giving "
                           "some learners a deadline of their own (the late policy and "
                           "penalty then count from it)"))
    p.add_argument("--fetch-only", action="store_true",
                   help=tr("with --roster: record which commits each repository holds now "
                           "(DIR/.repos/sightings.json) and grade nothing: run it at the "
                           "deadline, so that a commit pushed later counts as late whatever "
                           "its date says"))
    p.add_argument("--allow-local-repos", action="store_true",
                   help=tr("with --roster: also clone file:// repositories"))
