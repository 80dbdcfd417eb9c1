"""Grading the learners: each by this grader's own `grade --classroom`, in a process
of its own, from a private staging folder that holds only their solution files.

A learner whose code crashes, hangs or attacks the grader spoils only their own row.
On Linux one fork server, started once for the class, spawns each grade's.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING

from grader.classroom.gradebook.grade_process import GradeProcess
from grader.classroom.gradebook.outputs import Row, failed_report, hand_in_of, record_learner
from grader.classroom.gradebook.roster import Learner
from grader.classroom.gradebook.state import save_state
from grader.grading.values.failures import BUSY
from grader.grading.values.sanitise import visible
from grader.locale import tr
from grader.registry import Problem
from grader.reports.results import nothing_handed_in
from grader.reports.scoring import score_report
from grader.sandbox.host.channel import WorkerDied
from grader.sandbox.host.forkserver_client import ForkServerClient
from grader.sandbox.wire.limits import Limits

if TYPE_CHECKING:
    from rich.console import Console

# Beyond the learner's own time budget, what one problem may take the grader
# (the reference, hypothesis), and what starting the grader takes.
GRADER_SECONDS_PER_PROBLEM = 120
GRADER_STARTUP_SECONDS = 120

# The graders running now: each in a session of its own, so Ctrl-C reaches only
# this process, which must then end them itself.
_running: set[GradeProcess] = set()
_running_lock = threading.Lock()
_stopping = threading.Event()


def run_grader(argv: list[str], timeout: float, stderr_path: Path,
               servers: ForkServerClient | None = None) -> tuple[int | None, str, str | None]:
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
        trouble = tr("the sandbox's fork server stopped during this grade; grade again")
    try:
        stderr = stderr_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        stderr = ""
    return code, stderr, trouble


def start_servers(args: argparse.Namespace) -> ForkServerClient | None:
    """One fork server, sandboxed as a grade's would be, to spawn each grade's from."""
    try:
        return ForkServerClient(debug=bool(os.environ.get("GPT_KATA_DEBUG")),
                          sandbox=Limits(memory_bytes=int(args.memory * 2**20)))
    except OSError:
        return None  # each grade starts its own


def spawn_server(servers: ForkServerClient | None) -> tuple[socket.socket, int] | None:
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
                  servers: ForkServerClient | None = None) -> dict:
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
            return failed_report(trouble, chosen)
        if code is None:
            return failed_report(tr("grading took longer than {limit} s and was stopped",
                                     limit=f"{limit:g}"),
                                 chosen)
        try:
            report = json.loads(report_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            last = stderr.strip().splitlines()[-1:] or [tr("exit code {code}", code=code)]
            return failed_report(tr("the grader wrote no report: {why}", why=last[0]), chosen)
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
    missing = {p.slug for p in chosen if learner.files[p.folder] is None}
    # The run's message, where it was a check's of an empty file graded for a missing
    # one ("no class Solution"), is said again of what the learner handed in.
    said_of_missing = {t.get("message") for t in report.get("tests", [])
                       if t.get("problem") in missing}
    for test in report.get("tests", []):
        problem = by_slug.get(test.get("problem"))
        if problem is not None and problem.slug in missing:
            reason = learner.reasons.get(problem.folder, tr("no such file"))
            test.update(status="error", score=0, output=None,
                        message=tr("missing: {path} ({reason})",
                                       path=f"{problem.folder}/solution.py", reason=reason))
    if report.get("message") is not None and report["message"] in said_of_missing:
        handed_in = [t.get("message") for t in report.get("tests", [])
                     if t.get("problem") not in missing and t.get("message")]
        report["message"] = handed_in[0] if handed_in else nothing_handed_in(len(missing))
    files = (report.get("provenance") or {}).get("files")
    if isinstance(files, dict):  # a missing file was graded as an empty one: no hash
        files.update({p.folder: None for p in chosen if learner.files[p.folder] is None})
    # A missing problem passes nothing now: its points again, from the one scorer.
    return score_report(report)


# Marks the state's key of a learner graded once more for a time-out on a busy machine.
AGAIN = "+again-when-quieter"


def out_of_time_when_busy(report: dict) -> bool:
    """Whether a check of the report ran out of time on a machine too busy to tell
    slow code from an endless loop (kind `busy`, grader/sandbox/host/slow_or_endless.py)."""
    return any(isinstance(test, dict) and test.get("kind") == BUSY
               for test in report.get("tests") or [])


def grade_all(todo: dict[str, tuple[Learner, str]], chosen: list[Problem],
              args: argparse.Namespace, servers: ForkServerClient | None, out: Path,
              state: dict[str, str], rows: dict[str, Row], console: Console) -> None:
    """Grade every learner in `todo`, `args.jobs` at a time, saving as each ends."""
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    busy: list[str] = []
    with Progress(TextColumn(f"[bold]{escape(tr('grading'))}[/]"), BarColumn(),
                  MofNCompleteColumn(),
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
                    report = failed_report(f"{type(exc).__name__}: {exc}", chosen)
                rows[name] = record_learner(out, name, report, chosen, args.junit,
                                            hand_in_of(args, name))
                if rows[name].error:
                    state.pop(name, None)  # try again next time
                elif (out_of_time_when_busy(report)
                      and state.get(name) != todo[name][1] + AGAIN):
                    # A busy machine may have starved a right but slow answer: the
                    # score stands for now, and the next run grades them once more
                    # (the key marked is no learner's key). Code that keeps the machine
                    # busy itself (a loop that computes part of the time) must not have
                    # every run spend its time budget: a second time-out in a row, on
                    # the same files, is final.
                    state[name] = todo[name][1] + AGAIN
                    busy.append(name)
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
            # Their graders ended, the threads end soon, each removing its learner's
            # staging folder: the command exits without waiting for threads.
            pool.shutdown(wait=True)
            raise
        pool.shutdown()
    if busy:
        console.print(tr("ran out of time while the machine was busy, graded once more at "
                         "the next run: {names}", names=escape(", ".join(sorted(busy)))))
