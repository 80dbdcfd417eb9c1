"""`gpt-kata grade`: the learner's files (or any folder, or the references) graded.

Heavy imports (torch, pytest) happen inside `grade_with`, after the fork server
has been started, so that both processes load torch at the same time.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grader import paths, wording
from grader.grading.values.sanitise import visible
from grader.learner import status
from grader.learner.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.learner.options import (
    KataParser,
    add_limit_options,
    check_report_target,
    hidden_in_a_copy,
    limits_from,
    require_isolation,
    select_problems,
)
from grader.learner.output import console
from grader.learner.shown import show, write_reports
from grader.locale import tr
from grader.registry import Problem, problems

if TYPE_CHECKING:

    from grader.reports.report import ProblemSummary
    from grader.sandbox.host.pool import WorkerPool
    from grader.sandbox.wire.limits import Limits


def add_grade_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("problems", nargs="*", metavar="PROBLEM",
                   help=tr("slug, number, folder or path, e.g. generate, 6, 06-generate or "
                           "problems/06-generate/ (default: every problem)"))
    p.add_argument("--submission", metavar="PATH",
                   help=tr("grade this file (one problem) or folder laid out like problems/ "
                           "(default: your problems/)"))
    p.add_argument("--reference", action="store_true",
                   help=tr("grade the reference solutions"))
    p.add_argument("--json", metavar="FILE", help=tr("also write a JSON report to FILE"))
    p.add_argument("--junit", metavar="FILE", help=tr("also write a JUnit XML report to FILE"))
    add_limit_options(p)
    p.add_argument("--jobs", type=int, choices=(1, 2), default=default_jobs(),
                   help=tr("2: grade four problems or more (untouched starters aside) in "
                           "two processes at once, where the system forks (Linux); 1: in "
                           "one (default: %(default)s here; 2 where two cores are free, else 1)"))
    p.add_argument("--classroom", action="store_true",
                   help=tr("grade files you do not trust: refuse to run without a sandbox"))
    p.add_argument("--allow-unisolated", action="store_true",
                   help=tr("with --classroom, grade even where no sandbox is available"))
    p.add_argument("--no-sandbox", action="store_true",
                   help=tr("run your code without the sandbox (your own code only)"))
    p.add_argument("-q", "--quiet", action="store_true", help=tr("print nothing on stdout"))
    p.add_argument("-v", "--verbose", action="store_true",
                   help=tr("show every failing check"))
    hidden_in_a_copy(p, NOT_IN_A_COPY)


# The grade's options a learners' copy refuses (grader/learner/practice.py), or has no
# sandbox for them to set.
NOT_IN_A_COPY = ("submission", "reference", "junit", "memory", "scratch_mb", "jobs", "classroom",
                 "allow_unisolated", "no_sandbox")


def default_jobs() -> int:
    """Two processes where two cores are free to this one: a grade's time is mostly
    the grader's own, one core's worth (grader/grading/engine/helpers.py)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(2, cores or 1))


def grade_parser() -> argparse.ArgumentParser:
    """`gpt-kata grade`'s own parser, for a grade run without the whole command line."""
    parser = KataParser(prog="gpt-kata grade")
    add_grade_arguments(parser)
    return parser


def resolve_submissions(args: argparse.Namespace) -> dict[Problem, Path]:
    chosen = select_problems(args.problems)
    if args.reference and args.submission:
        raise UsageError(tr("use either --reference or --submission, not both"))
    if args.reference:
        return {p: p.reference for p in chosen}
    if args.submission is None:
        if not any(p.starter.is_file() for p in chosen):
            raise UsageError(tr("no problems/NN-slug/solution.py in {kata}: run gpt-kata "
                                "in your kata folder, or name one with --submission",
                                kata=paths.KATA))
        if missing := [p for p in chosen if not p.starter.is_file()]:
            raise UsageError(tr("{files} missing or not a file: `gpt-kata reset {slug}` puts "
                                "the starter back (and keeps what is there as a .bak)",
                                files=", ".join(f"problems/{p.folder}/solution.py"
                                                for p in missing), slug=missing[0].slug))
        return {p: p.starter for p in chosen}
    target = Path(args.submission)
    if target.is_file():
        if not args.problems:
            by_folder = [p for p in problems() if p.folder == target.resolve().parent.name]
            if not by_folder:
                raise UsageError(tr("which problem is {target} for? name it: "
                                    "gpt-kata grade PROBLEM --submission {target}",
                                    target=target))
            chosen = by_folder
        if len(chosen) != 1:
            raise UsageError(tr("--submission FILE grades one problem; name exactly one"))
        return {chosen[0]: target}
    if target.is_dir():
        target = handed_in_folder(target)
        found = {p: target / p.folder / "solution.py" for p in chosen}
        # Named as asked, case included, as Linux finds it (macOS and Windows do not
        # tell case apart): the same hand-in has the same problems everywhere.
        found = {p: f for p, f in found.items()
                 if f.is_file() and not paths.other_case(f, target)}
        if not found:
            raise UsageError(tr("{target} holds no NN-slug/solution.py files like problems/",
                                target=target))
        if args.problems and len(found) < len(chosen):
            missing = ", ".join(p.folder for p in chosen if p not in found)
            raise UsageError(tr("{target} has no solution.py for {missing}", target=target,
                                missing=missing))
        return found
    raise UsageError(tr("--submission {target}: no such file or folder", target=target))


def refuse_links_out(args: argparse.Namespace, submissions: dict[Problem, Path]) -> None:
    """In classroom mode a submission is the learner's own file: a link out of the
    folder given (to the references, say) or to anything but a regular file is
    refused, as the gradebook refuses it."""
    if not args.classroom or args.submission is None:
        return
    target = Path(args.submission)
    inside = target if target.is_dir() else target.parent
    for path in submissions.values():
        why = paths.leads_out(path, inside)
        if why:
            raise UsageError(tr("--submission: {path} is {why}; classroom mode grades only "
                                "the learner's own files", path=visible(str(path)), why=why))


def grade(args: argparse.Namespace, server_control: socket.socket | None = None) -> int:
    """`gpt-kata grade`; `server_control` is a fork server the gradebook spawned for it."""
    if paths.in_a_copy():  # a learners' copy: its stored answers judge
        from grader.learner import practice

        return practice.grade(args)
    # Here, not at the top: a learners' copy grades without the sandbox, and holds none.
    from grader.sandbox.host.pool import WorkerPool

    submissions = resolve_submissions(args)
    missing = left_out(args, submissions)
    refuse_links_out(args, submissions)
    check_report_target("--json", args.json, submissions.values())
    check_report_target("--junit", args.junit, submissions.values())
    require_isolation(args)
    limits = limits_from(args)
    # A classroom grade is sandboxed whatever the environment says: the switch that
    # takes macOS's and Windows's spawned path on Linux (for the tests) is the
    # learner's to set in Classroom50, and must not turn the sandbox off.
    sandboxed_only = sandbox_required(args)
    pool = WorkerPool(debug=bool(os.environ.get("GPT_KATA_DEBUG")),
                      fork=True if sandboxed_only else None,
                      sandbox=None if args.no_sandbox else limits,
                      server_control=server_control,
                      # A practice grade's workers look the kept passes up; a classroom
                      # grade's compute every one (grader/model/forward_store.py).
                      forwards=None if args.classroom else str(paths.STATE))
    # Closed whatever ends the grade from here on, a SIGTERM during the start too: the
    # spawned path's scratch folder is made in `prepare`.
    try:
        pool.start()  # the fork server imports torch while this process does the same
        # Only now: its imports (the report's, 0.1 s) overlap the fork server's start.
        from grader.grading.engine.helpers import can_share, prepare

        if sandboxed_only and pool.server is None:
            raise UsageError("classroom mode grades inside the sandbox, and its fork server "
                             "could not start here; grade on a machine where it can, or "
                             "pass --allow-unisolated to grade without it")
        # A grade of many problems is shared with a helper process where it can be
        # (grader/grading/engine/helpers.py); it is forked before any thread starts,
        # so only a grade in one process has its workers started now.
        # A gradebook grades its learners side by side already: each grade in one process.
        processes = 1 if server_control is not None else getattr(args, "jobs", 1)
        sharing = can_share(pool, submissions, processes)
        if not sharing:
            prepare(pool, submissions)
        return grade_with(args, submissions, pool, limits, shared=sharing, missing=missing)
    finally:
        pool.close()
        # Whatever ended the grade, a later one in this process opens a store of its own.
        if (store := sys.modules.get("grader.model.forward_store")) is not None:
            store.use(None)


def handed_in_folder(target: Path) -> Path:
    """The folder of NN-slug/solution.py files a --submission folder is: itself, or the
    problems/ inside a learner's repository, as the gradebook takes one."""
    if not any((target / p.folder).is_dir() for p in problems()) and (
            target / "problems").is_dir():
        return target / "problems"
    return target


def left_out(args: argparse.Namespace, submissions: dict[Problem, Path]) -> list[Problem]:
    """In classroom mode, the problems a --submission folder holds no solution.py for,
    where no problem is named: each scores 0 of its points, as the gradebook scores
    a missing file, so that leaving a problem out never raises a score."""
    if (not args.classroom or args.problems or args.submission is None
            or not Path(args.submission).is_dir()):
        return []
    return [p for p in problems() if p not in submissions]


def missing_summary(problem: Problem, folder: Path) -> ProblemSummary:
    """A problem left out of a classroom hand-in, as its report shows it: one check,
    failed, worth all of the problem's points."""
    from grader.grading.values.failures import UNAVAILABLE
    from grader.reports.report import ProblemSummary
    from grader.reports.results import TestResult

    path = folder / problem.folder / "solution.py"
    other = paths.other_case(path, folder)
    why = (tr("no such file; {name} differs in case, which Linux tells apart", name=other)
           if other else tr("not a file") if path.exists() or path.is_symlink()
           else tr("no such file"))
    return ProblemSummary(problem, path, [TestResult(
        tr("Handed in"), problem, "error", kind=UNAVAILABLE,
        message=tr("missing: {file} ({why}): a problem left out scores 0",
                   file=f"{problem.folder}/solution.py", why=why))], missing=True)


def sandbox_required(args: argparse.Namespace) -> bool:
    """Whether this grade must run in the sandbox: in classroom mode on Linux, unless
    the instructor allowed otherwise (require_isolation has refused other systems)."""
    return (args.classroom and not args.allow_unisolated and not args.no_sandbox
            and sys.platform.startswith("linux"))


def unisolated_because(args: argparse.Namespace, pool: WorkerPool) -> str:
    """Why a classroom grade ran without the sandbox, for its report."""
    if args.no_sandbox:
        return "--no-sandbox"
    if not sys.platform.startswith("linux"):
        return f"--allow-unisolated on {sys.platform}, which has no sandbox"
    if not pool.use_fork:
        return "--allow-unisolated, and the workers were spawned without the sandbox"
    return "--allow-unisolated, and no worker reported a layer"


def grade_with(args: argparse.Namespace, submissions: dict[Problem, Path],
               pool: WorkerPool, limits: Limits, shared: bool = False,
               missing: list[Problem] | tuple[Problem, ...] = ()) -> int:
    from rich.markup import escape

    from grader.importing import without_collections

    with without_collections():  # torch, pytest, hypothesis
        from grader.grading.engine.helpers import grade_shared
        from grader.grading.engine.session import goldens_mode, grade_problems
    from grader.learner.sandbox_notice import layers_line, unsandboxed
    from grader.model import forward_store

    store = (None if args.classroom
             else forward_store.use(forward_store.store_path(paths.STATE)))
    out = console(stderr=args.quiet)
    if not args.quiet:
        source = tr("the reference solutions") if args.reference else (
            args.submission or "problems/")
        out.print("[bold]gpt-kata[/] " + escape(tr("grading {problems} from {source}",
                                                   problems=wording.problems(
                                                       len(submissions) + len(missing)),
                                                   source=visible(source))))
        if goldens_mode() == "live-only" and args.verbose:
            out.print("[dim]" + tr("this machine's torch or CPU differs from the one the "
                                   "goldens were made on, so answers are compared with the "
                                   "reference run here") + "[/]")
        if not args.no_sandbox and (unsandboxed_line := unsandboxed(pool)):
            out.print(f"[dim]{escape(unsandboxed_line)}[/]")
    if shared:
        report, server_failed = grade_shared(submissions, pool, limits)
    else:
        report = grade_problems(submissions, pool, limits)
        server_failed = pool.server_failed
    if missing:
        folder = handed_in_folder(Path(args.submission))
        report.summaries = sorted(
            [*report.summaries, *(missing_summary(p, folder) for p in missing)],
            key=lambda summary: summary.problem.number)
    report.mode = "classroom" if args.classroom else "practice"
    if args.classroom and not report.isolation:
        # A classroom report never hides that nothing isolated the code.
        report.isolation = [f"unisolated:{unisolated_because(args, pool)}"]
    if server_failed:
        # The grader's own machinery failed, not the code: no problem is reported as
        # failed, and a gradebook shows the learner as not graded, to grade again.
        report.summaries = []
        report.internal_errors.append(tr(
            "the grader's fork server stopped answering during this grade (it was "
            "stopped or ended from outside), so nothing was graded: grade again"))
    pool.close()  # every worker is gone before anything is written
    # The reports and the status first: whatever happens to the terminal (a closed
    # pipe, an encoding, a bug in rendering), what was graded is kept.
    written = write_reports(args, report)
    if store is not None:  # after the reports: nothing of the grade waits on it
        store.save()
    if not args.reference and args.submission is None:
        status.record(report)
    if not args.quiet:
        show(report, out, args.verbose)
        if not args.reference and args.submission is None:
            for line in status.earlier_unpassed(report):
                out.print(f"[dim]{escape(line)}[/]", highlight=False)
        # The layers the workers said they could not set up (none when unsandboxed).
        if missing_line := layers_line(report.isolation):
            out.print(f"[dim]{escape(missing_line)}[/]")
    grade_code = EXIT_PASS if report.status == "pass" else EXIT_FAIL
    return grade_code if written else EXIT_FAIL
