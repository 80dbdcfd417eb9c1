"""`gpt-kata gradebook ROSTER --out DIR`: grade a whole class.

ROSTER holds one folder per learner: a clone of the kata (its problems/ is
graded) or a folder laid out like problems/. Only the learners' solution files
are read, as data: each is copied, if it is a regular file inside the learner's
folder, into a private staging folder, and graded there by this grader's own
`grade --classroom` in a process of its own. A clone's grader/ folder, or
anything else beside the solutions, is never imported, run or even read, and a
learner whose code crashes, hangs or attacks the grader spoils only their own row.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grader import paths
from grader.cli import layouts, shards
from grader.cli.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.cli.grade_process import GradeProcess, forking, warm_up
from grader.cli.gradebook_files import COLUMNS, failed_report, report_stem, write_csv
from grader.cli.options import (
    positive_count,
    positive_megabytes,
    positive_seconds,
    require_isolation,
)
from grader.cli.shards import shard_of, shard_spec
from grader.grading.sanitise import cell, folder_name, uncell, visible
from grader.grading.scoring import format_points, score_report
from grader.registry import Problem
from grader.registry import problems as all_problems

if TYPE_CHECKING:
    from rich.console import Console

from grader.sandbox.process import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_MEMORY_MB,
    DEFAULT_PROBLEM_BUDGET,
    DEFAULT_SCRATCH_MB,
    ForkServer,
    Sandbox,
    WorkerDied,
)

# Solutions are a few kilobytes; a huge file is a mistake or an attack on the grader.
MAX_SOLUTION_BYTES = 1_000_000
STATE_FILE = ".gradebook-state.json"
# Beyond the learner's own time budget, what one problem may take the grader
# (the reference, hypothesis), and what starting the grader takes.
GRADER_SECONDS_PER_PROBLEM = 120
GRADER_STARTUP_SECONDS = 120

# The graders running now: each in a session of its own, so Ctrl-C reaches only
# this process, which must then end them itself.
_running: set[GradeProcess] = set()
_running_lock = threading.Lock()
_stopping = threading.Event()


@dataclass
class Learner:
    name: str
    folder: Path  # where their NN-slug/solution.py files are
    files: dict[str, bytes | None]  # problem folder -> the file's bytes, None if not taken
    # The learner's solutions to the problems not graded now: staged beside the graded
    # ones, only so that a solution can use an earlier one (grader.reuse.solution_of).
    others: dict[str, bytes] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # why a file was not taken
    notes: list[str] = field(default_factory=list)  # how their kata was found


@dataclass
class Row:
    learner: str
    cells: dict[str, str]  # problem slug -> pass, fail, missing (error: not graded)
    score: float = 0  # points, from grading/scoring.py
    max_score: float = 0
    skipped: bool = False
    error: str = ""
    notes: list[str] = field(default_factory=list)  # how their hand-in was read

    @property
    def passed(self) -> int:
        return sum(c == "pass" for c in self.cells.values())


# -- reading the roster ------------------------------------------------------------------

def read_solution(path: Path, inside: Path) -> tuple[bytes | None, str]:
    """The file's bytes, or None and why not: links may not lead out of the learner's
    folder (to the references, say), and only regular files of sane size count."""
    if not path.exists() and not path.is_symlink():
        return None, "no such file"
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None, "a broken link"
    if not real.is_relative_to(inside):
        return None, "a link out of the learner's folder"
    if not real.is_file():
        return None, "not a regular file"
    try:
        with real.open("rb") as handle:
            content = handle.read(MAX_SOLUTION_BYTES + 1)
    except OSError as exc:
        return None, f"unreadable ({exc.strerror})"
    if len(content) > MAX_SOLUTION_BYTES:
        return None, f"larger than {MAX_SOLUTION_BYTES} bytes"
    return content, ""


def collect(name: str, root: Path, chosen: list[Problem]) -> Learner:
    # Where the kata is in their folder or zip (grader/cli/layouts.py); a zip is
    # unpacked only while its solutions are read.
    with layouts.opened(root, [p.folder for p in chosen]) as found:
        inside, folder = found.inside, found.folder
        # Nothing found: the report and the table say what was looked for.
        notes = [*found.notes, *([found.looked_for] if found.looked_for else [])]
        learner = Learner(name, Path(found.shown), {}, notes=notes)
        for p in chosen:
            content, reason = read_solution(folder / p.folder / "solution.py", inside)
            learner.files[p.folder] = content
            if content is None:
                learner.reasons[p.folder] = found.looked_for or reason
        for p in all_problems():
            if p.folder not in learner.files:
                content, _reason = read_solution(folder / p.folder / "solution.py", inside)
                if content is not None:
                    learner.others[p.folder] = content
    return learner


def roster_folders(roster: Path, out: Path) -> dict[str, Path]:
    if not roster.is_dir():
        raise UsageError(f"{roster}: no such folder (ROSTER holds one folder per learner)")
    out = out.resolve()
    # Each learner is known by their folder's name made safe (grading/sanitise.py):
    # one line, any bytes that are not UTF-8 kept as \xNN, so no two folders share one.
    # A zip file is a learner too, known by its name without .zip (grader/cli/layouts.py).
    entries = sorted((e for e in roster.iterdir() if layouts.is_hand_in(e) and e.resolve() != out),
                     key=lambda e: not e.is_dir())  # folders claim their names first
    found: dict[str, Path] = {}
    for entry in entries:
        found[folder_name(layouts.learner_name(entry, set(found)))] = entry
    if not found:
        raise UsageError(f"{roster} holds no learner folders")
    return dict(sorted(found.items()))


# -- knowing what is already graded ----------------------------------------------------

def grader_fingerprint() -> str:
    """Changes whenever the grader, its checks, references or data change."""
    digest = hashlib.sha256()
    files = [*sorted(paths.PACKAGE.rglob("*.py")), paths.REGISTRY,
             *sorted(paths.SOLUTIONS.glob("*/solution.py")), *sorted(paths.DATA.glob("*.*"))]
    for path in files:
        digest.update(str(path.relative_to(path.anchor)).encode())
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def inputs_key(learner: Learner, grader: str, options: dict) -> str:
    files = {folder: hashlib.sha256(content).hexdigest() if content is not None else None
             for folder, content in learner.files.items()}
    # An earlier solution that a graded one uses changes its grade too.
    files.update({folder: hashlib.sha256(content).hexdigest()
                  for folder, content in learner.others.items()})
    material = {"grader": grader, "options": options, "files": files}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def load_state(out: Path) -> dict[str, str]:
    try:
        state = json.loads((out / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def save_state(out: Path, state: dict[str, str]) -> None:
    tmp = out / f"{STATE_FILE}.tmp"
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out / STATE_FILE)


# -- grading one learner -----------------------------------------------------------------

def row_from_report(name: str, report: dict, chosen: list[Problem]) -> Row:
    statuses = {p.get("problem"): p.get("status") for p in report.get("problems", [])}
    cells = {}
    for p in chosen:
        status = statuses.get(p.slug)
        cells[p.slug] = ("pass" if status == "pass" else "missing" if status == "missing"
                         else "error" if status is None else "fail")
    row = Row(name, cells, float(report.get("score") or 0), float(report.get("max_score") or 0))
    row.notes = [visible(n) for n in report.get("notes") or [] if isinstance(n, str)]
    return row




def run_grader(argv: list[str], timeout: float, stderr_path: Path,
               servers: ForkServer | None = None) -> tuple[int | None, str, str | None]:
    """Exit code (None on time-out), stderr, and why the grade cannot count, if it
    cannot; the whole process group ends either way.

    With `servers`, the grade gets a fork server spawned from it instead of
    starting one (and importing torch) itself.
    """
    spawned = spawn_server(servers)
    try:
        with _running_lock:
            if _stopping.is_set():  # the run was interrupted: start nothing new
                return None, "", None
            process = GradeProcess(argv, str(stderr_path), spawned[0] if spawned else None)
            _running.add(process)
        if spawned:
            # The grade holds its own end now: when it exits, its server sees the
            # socket close and ends, and every worker with it.
            spawned[0].close()
        try:
            code = process.wait(timeout)
        finally:
            with _running_lock:
                _running.discard(process)
                process.kill()
    finally:
        if spawned and servers is not None:
            spawned[0].close()
            servers.end(spawned[1], 0.0)
    trouble = None
    if spawned and servers is not None and not servers.alive:
        # Its workers went with the class's server: failures were the grader's.
        trouble = "the sandbox's fork server stopped during this grade; grade again"
    try:
        stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        stderr = ""
    return code, stderr, trouble


def start_servers(args: argparse.Namespace) -> ForkServer | None:
    """One fork server, sandboxed as a grade's would be, to spawn each grade's from."""
    try:
        return ForkServer(debug=bool(os.environ.get("GPT_KATA_DEBUG")),
                          sandbox=Sandbox(memory_bytes=int(args.memory * 2**20)))
    except OSError:
        return None  # each grade starts its own


def spawn_server(servers: ForkServer | None) -> tuple[socket.socket, int] | None:
    if servers is None or not servers.alive:
        return None
    try:
        return servers.spawn()
    except (WorkerDied, OSError, ValueError, KeyError):
        return None  # the grade starts a server of its own, as it would alone


def stop_all() -> None:
    with _running_lock:
        _stopping.set()
        for process in _running:
            process.kill()


def grade_learner(learner: Learner, chosen: list[Problem], args: argparse.Namespace,
                  servers: ForkServer | None = None) -> dict:
    """The learner's report, in the shape `grade --json` writes."""
    with tempfile.TemporaryDirectory(prefix="gpt-kata-gradebook-") as tmp:
        stage = Path(tmp) / "problems"
        for p in chosen:
            target = stage / p.folder / "solution.py"
            target.parent.mkdir(parents=True)
            # A missing file is graded as an empty one, so that its checks still count
            # in max_score and every learner is scored out of the same total.
            target.write_bytes(learner.files[p.folder] or b"")
        for folder, content in learner.others.items():
            (stage / folder).mkdir(parents=True)
            (stage / folder / "solution.py").write_bytes(content)
        report_path = Path(tmp) / "report.json"
        argv = ["--submission", str(stage), "--json", str(report_path), "-q", "--classroom",
                   "--timeout", str(args.timeout), "--budget", str(args.budget),
                   "--memory", str(args.memory), "--scratch-mb", str(args.scratch_mb),
                   *(["--allow-unisolated"] if args.allow_unisolated else []),
                   *(p.slug for p in chosen)]
        limit = GRADER_STARTUP_SECONDS + len(chosen) * (args.budget + GRADER_SECONDS_PER_PROBLEM)
        code, stderr, trouble = run_grader(argv, limit, Path(tmp) / "stderr.txt", servers)
        if trouble is not None:
            return failed_report(trouble)
        if code is None:
            return failed_report(f"grading took longer than {limit:g} s and was stopped")
        try:
            report = json.loads(report_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            last = stderr.strip().splitlines()[-1:] or [f"exit code {code}"]
            return failed_report(f"the grader wrote no report: {last[0]}")
    return relabel(report, learner, chosen)


def relabel(report: dict, learner: Learner, chosen: list[Problem]) -> dict:
    """Point the report at the learner's own files, and call missing ones missing."""
    by_slug = {p.slug: p for p in chosen}
    if learner.notes:
        report["notes"] = [visible(note) for note in learner.notes]
    for entry in report.get("problems", []):
        problem = by_slug.get(entry.get("problem"))
        if problem is None:
            continue
        if learner.files[problem.folder] is None:
            entry.update(status="missing", passed=0, submission=None)
        else:
            entry["submission"] = visible(learner.folder / problem.folder / "solution.py")
    for test in report.get("tests", []):
        problem = by_slug.get(test.get("problem"))
        if problem is not None and learner.files[problem.folder] is None:
            reason = learner.reasons.get(problem.folder, "no such file")
            test.update(status="error", score=0, output=None,
                        message=f"missing: {problem.folder}/solution.py ({reason})")
    files = (report.get("provenance") or {}).get("files")
    if isinstance(files, dict):  # a missing file was graded as an empty one: no hash
        files.update({p.folder: None for p in chosen if learner.files[p.folder] is None})
    # A missing problem passes nothing now: its points again, from the one scorer.
    return score_report(report)


# -- the command ---------------------------------------------------------------------------



def csv_lines(rows: list[Row], chosen: list[Problem]) -> list[list[str]]:
    # A learner's name is theirs to choose: a spreadsheet must show it, not run it.
    return [[cell(row.learner), str(row.passed), str(len(chosen)), format_points(row.score),
             format_points(row.max_score), *(row.cells[p.slug] for p in chosen)]
            for row in rows]




def write_report(out: Path, name: str, report: dict, junit: bool) -> None:
    stem = report_stem(name)
    tmp = out / f".{stem}.json.tmp"
    try:
        tmp.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        tmp.replace(out / f"{stem}.json")
    finally:
        tmp.unlink(missing_ok=True)
    if junit:
        from grader.grading.junit import write_junit

        write_junit(report, out / f"{stem}.junit.xml", suite=f"gpt-kata: {name}")


def record_learner(out: Path, name: str, report: dict, chosen: list[Problem],
                   junit: bool) -> Row:
    """The learner's row, their reports written; a report that cannot be written (a
    full disk, say) makes the row an error with the reason, and the class goes on."""
    row = row_from_report(name, report, chosen)
    if report.get("status") == "error" and not report.get("problems"):
        row.error = visible(report.get("message") or "not graded")
    try:
        write_report(out, name, report, junit)
    except OSError as exc:
        row.error = f"their report could not be written: {visible(exc)}"
        try:  # at least the reason, in place of a report from an earlier run
            write_report(out, name, failed_report(row.error), junit)
        except OSError:
            pass  # the row says why
    if row.error:
        row.cells = dict.fromkeys(row.cells, "error")
        row.score = row.max_score = 0  # as for any learner the class could not grade
    return row


def grade_all(todo: dict[str, tuple[Learner, str]], chosen: list[Problem],
              args: argparse.Namespace, servers: ForkServer | None, out: Path,
              state: dict[str, str], rows: dict[str, Row], console: Console) -> None:
    """Grade every learner in `todo`, `args.jobs` at a time, saving as each ends."""
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn("[bold]grading[/]"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), console=console) as progress:
        task = progress.add_task("", total=len(todo))
        pool = ThreadPoolExecutor(max_workers=args.jobs)
        futures: dict[Future[dict], str] = {
            pool.submit(grade_learner, learner, chosen, args, servers): name
            for name, (learner, _) in todo.items()}
        try:
            for future in as_completed(futures):
                name = futures[future]
                try:
                    report = future.result()
                except Exception as exc:  # one learner's trouble must not end the class
                    report = failed_report(f"{type(exc).__name__}: {exc}")
                rows[name] = record_learner(out, name, report, chosen, args.junit)
                if rows[name].error:
                    state.pop(name, None)  # try again next time
                else:
                    state[name] = todo[name][1]
                try:
                    save_state(out, state)
                except OSError:
                    pass  # without it, the next run regrades more learners than needed
                progress.update(task, advance=1, description=escape(name))
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)
            stop_all()
            raise
        pool.shutdown()


def gradebook(args: argparse.Namespace) -> int:
    from grader.cli.options import select_problems
    from grader.cli.output import console as make_console

    if args.merge:
        if args.roster is not None or args.shard is not None:
            raise UsageError("--merge joins finished gradebooks: give no ROSTER, PROBLEM "
                             "or --shard with it")
        return merge(args)
    if args.roster_file is not None:  # repositories at a deadline: grader/cli/roster.py
        from grader.cli.roster import gradebook_of_repositories

        return gradebook_of_repositories(args, gradebook)
    if args.roster is None:
        raise UsageError("name the ROSTER folder (or --merge DIR... to join gradebooks)")
    chosen = select_problems(args.problems)
    if args.lms_ids:  # a mistake in it is told before the class is graded, not after
        from grader.cli.lms_export import read_ids

        read_ids(Path(args.lms_ids))
    out = Path(args.out)
    learners = roster_folders(Path(args.roster), out)
    if args.shard is not None:
        learners = shard_of(learners, *args.shard)
    require_isolation(argparse.Namespace(classroom=True, allow_unisolated=args.allow_unisolated))
    out.mkdir(parents=True, exist_ok=True)
    shards.record(out, args.shard)  # so that a merge can tell when a shard is missing
    console = make_console(quiet=args.quiet)

    options = {"problems": [p.slug for p in chosen], "timeout": args.timeout,
               "budget": args.budget, "memory": args.memory,
               "unisolated": args.allow_unisolated}
    grader = grader_fingerprint()
    state = load_state(out)
    rows: dict[str, Row] = {}
    todo: dict[str, tuple[Learner, str]] = {}
    for name, folder in learners.items():
        try:
            learner = collect(name, folder, chosen)
        except OSError as exc:  # a folder the grader may not read spoils only its row
            rows[name] = record_learner(out, name, failed_report(
                f"their folder could not be read: {exc}"), chosen, args.junit)
            continue
        key = inputs_key(learner, grader, options)
        earlier = out / f"{report_stem(name)}.json"
        fresh = (not args.force and state.get(name) == key and earlier.is_file()
                 and (not args.junit or (out / f"{report_stem(name)}.junit.xml").is_file()))
        if fresh:
            try:
                report = json.loads(earlier.read_text(encoding="utf-8"))
                rows[name] = row_from_report(name, report, chosen)
                rows[name].skipped = True
                continue
            except (OSError, ValueError):
                pass  # an unreadable report is graded again
        todo[name] = (learner, key)

    servers = None
    if todo and forking():
        servers = start_servers(args)  # it imports torch while this process does
        warm_up()  # before the progress bar's thread and the graders' threads start
    try:
        grade_all(todo, chosen, args, servers, out, state, rows, console)
    finally:
        if servers is not None:
            servers.close()

    ordered = [rows[name] for name in learners]
    try:
        write_csv(out / "gradebook.csv", [*COLUMNS, *(p.slug for p in chosen)],
                  csv_lines(ordered, chosen))
    except OSError as exc:
        print(f"gpt-kata gradebook: {out / 'gradebook.csv'} could not be written: {exc}; "
              f"every learner's report is in {out}", file=sys.stderr)
        return EXIT_FAIL
    lms_exports(args, out / "gradebook.csv")
    try:
        show_table(console, ordered, chosen, out)
    except Exception as exc:  # noqa: BLE001 - the gradebook is written; say so in one line
        print(f"gpt-kata gradebook: the table could not be shown ({type(exc).__name__}: "
              f"{visible(exc)}); {out / 'gradebook.csv'} was written", file=sys.stderr)
    return EXIT_FAIL if any(row.error for row in ordered) else EXIT_PASS


def show_table(console: Console, ordered: list[Row], chosen: list[Problem], out: Path) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(caption=f"{len(ordered)} learner(s), {len(chosen)} problem(s)")
    for column in ("learner", "problems", "score", "note"):
        table.add_column(column)
    for row in ordered:
        note = (f"[red]not graded: {escape(visible(row.error))}[/]" if row.error
                else "[dim]unchanged, not regraded[/]" if row.skipped
                else f"[dim]{escape('; '.join(row.notes))}[/]")
        table.add_row(escape(row.learner), f"{row.passed}/{len(chosen)}",
                      f"{format_points(row.score)}/{format_points(row.max_score)}", note)
    console.print(table)
    console.print(f"wrote {escape(str(out / 'gradebook.csv'))} and one report per learner "
                  f"in {escape(str(out))}")


# -- shards and merging ------------------------------------------------------------------





def merge(args: argparse.Namespace) -> int:
    """Join finished gradebooks (shards of one class) into one in --out."""
    out = Path(args.out)
    header: list[str] | None = None
    first = Path()
    rows: dict[str, list[str]] = {}
    origin: dict[str, Path] = {}
    state: dict[str, str] = {}
    missing = shards.check_complete(list(map(Path, args.merge)), args.allow_partial)
    # With --roster, the merge answers for every learner on it, not only those graded.
    on_roster = roster_names(args)
    for folder in map(Path, args.merge):
        table = folder / "gradebook.csv"
        try:
            with table.open(newline="", encoding="utf-8") as handle:
                lines = list(csv.reader(handle))
        except OSError:
            raise UsageError(f"--merge {folder}: no gradebook.csv there") from None
        if not lines or lines[0][:len(COLUMNS)] != COLUMNS:
            raise UsageError(f"{table} is not a gradebook")
        if header is None:
            header, first = lines[0], folder
        elif lines[0] != header:
            # Scores out of different problems cannot share one table.
            raise UsageError(f"{table} grades other problems than {first}: "
                             f"{', '.join(lines[0][len(COLUMNS):])}")
        for line in lines[1:]:
            if not line:
                continue
            # A name is quoted if it would be a formula: again here, for a table that
            # did not quote it (written by an older grader, or by hand).
            name = visible(uncell(line[0]))
            if name in rows:
                raise UsageError(f"{name} is in both {origin[name]} and {folder}")
            rows[name], origin[name] = [cell(name), *line[1:]], folder
        state.update({name: key for name, key in load_state(folder).items()
                      if name in rows and origin[name] == folder})
    assert header is not None  # argparse asks for at least one folder
    out.mkdir(parents=True, exist_ok=True)
    shards.record(out, None)  # the merged gradebook is the whole class
    for name, folder in origin.items():
        for suffix in (".json", ".junit.xml"):
            source = folder / f"{report_stem(name)}{suffix}"
            if source.is_file() and source.resolve() != (out / source.name).resolve():
                shutil.copyfile(source, out / source.name)
    if on_roster is not None:
        absent = fill_from_roster(out, header, rows, on_roster, missing,
                                  junit=any(out.glob("*.junit.xml")))
        if absent and not args.quiet:
            print(f"gpt-kata gradebook: {len(absent)} learner(s) on the roster have no result "
                  f"in these gradebooks; their rows say so: {', '.join(absent)}",
                  file=sys.stderr)
    write_csv(out / "gradebook.csv", header, [rows[name] for name in sorted(rows)])
    save_state(out, state)
    lms_exports(args, out / "gradebook.csv")
    if not args.quiet:
        print(f"wrote {out / 'gradebook.csv'}: {len(rows)} learner(s) from "
              f"{len(args.merge)} gradebook(s)")
    not_graded = [name for name, line in rows.items() if "error" in line[len(COLUMNS):]]
    return EXIT_FAIL if not_graded else EXIT_PASS


def roster_names(args: argparse.Namespace) -> list[str] | None:
    """The learners of --roster FILE, for a merge (no repository is needed)."""
    if getattr(args, "roster_file", None) is None:
        return None
    from grader.cli.roster_csv import read_roster

    return [entry.name for entry in read_roster(Path(args.roster_file), args.repo_url,
                                                need_urls=False)]


def fill_from_roster(out: Path, header: list[str], rows: dict[str, list[str]],
                     names: list[str], missing: list[str], junit: bool) -> list[str]:
    """Give every learner on the roster whom no gradebook holds an error row and a
    report saying so (exit 1, as for any learner not graded); the names of those."""
    extra = len(header) - len(COLUMNS)
    repositories = header[-2:] == ["commit", "late_minutes"]
    problems = extra - 2 * repositories
    why = "no gradebook merged holds a result for them"
    if missing:
        why += f" (shard(s) {', '.join(missing)} were not merged)"
    absent = [name for name in names if name not in rows]
    for name in absent:
        rows[name] = [cell(name), "0", str(problems), "0", "0", *["error"] * problems,
                      *["", ""] * repositories]
        write_report(out, name, failed_report(why), junit)
    extras = sorted(set(rows) - set(names))
    if extras:
        print(f"gpt-kata gradebook: not on the roster, kept: {', '.join(extras)}",
              file=sys.stderr)
    return absent


def lms_exports(args: argparse.Namespace, table: Path) -> None:
    """--canvas and --moodle, made from the gradebook.csv just written."""
    from grader.cli.lms_export import write_exports

    write_exports(table, args.canvas, args.moodle, args.lms_ids, args.lms_assignment)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("gradebook", help="grade a class: every learner's folder in ROSTER")
    p.add_argument("roster", metavar="ROSTER", nargs="?",
                   help="a folder with one folder per learner: a clone of the kata, or a "
                        "folder laid out like problems/")
    p.add_argument("problems", nargs="*", metavar="PROBLEM",
                   help="grade only these problems (default: all)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="where gradebook.csv and each learner's LEARNER.json go")
    p.add_argument("--shard", type=shard_spec, metavar="K/N",
                   help="grade only the K-th of N shares of the learners: in name order, "
                        "every N-th from the K-th (default: everyone)")
    p.add_argument("--merge", nargs="+", metavar="DIR",
                   help="instead of grading, join these gradebooks (e.g. the shards' --out "
                        "folders) into one in --out; with --roster FILE, every learner on it "
                        "gets a row, an error row if no gradebook holds them")
    p.add_argument("--allow-partial", action="store_true",
                   help="with --merge: join the shards given even when some of the N are "
                        "missing (their learners then have no row)")
    p.add_argument("--jobs", type=positive_count, default=os.cpu_count() or 1, metavar="N",
                   help="learners graded at a time (default: %(default)s, the cores)")
    p.add_argument("--force", action="store_true",
                   help="regrade learners whose files have not changed too")
    p.add_argument("--junit", action="store_true",
                   help="also write DIR/LEARNER.junit.xml")
    p.add_argument("--timeout", type=positive_seconds, default=DEFAULT_CALL_TIMEOUT,
                   metavar="SECONDS", help="limit for each call (default: %(default)g)")
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_PROBLEM_BUDGET,
                   metavar="SECONDS",
                   help="limit for all calls of one problem (default: %(default)g)")
    p.add_argument("--memory", type=positive_megabytes, default=DEFAULT_MEMORY_MB, metavar="MB",
                   help="memory a learner's code may use (default: %(default)g)")
    p.add_argument("--scratch-mb", type=positive_megabytes, default=DEFAULT_SCRATCH_MB,
                   metavar="MB", help="size of a learner's scratch folder (default: %(default)g)")
    p.add_argument("--allow-unisolated", action="store_true",
                   help="grade even where no sandbox is available")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing on stdout")
    from grader.cli.lms_export import add_arguments as add_lms_arguments

    add_lms_arguments(p)
    from grader.cli.roster import add_arguments as add_roster_arguments

    add_roster_arguments(p)
    p.set_defaults(run=gradebook)
