"""`gpt-kata grade` in a learners' copy: the practice grade, shown as the kata shows one.

A copy written by `gpt-kata release` holds no checks and no references: its
stored answers (the package gpt_kata_practice) judge each problem's fixed cases
and a few drawn examples. Their results become the kata's own results here, so the
report, the statuses `list` shows, the fix `hint` offers, the summary, `next:`
and the JSON are the kata's, in the same words and languages.
"""

from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path
from typing import Any

from grader.grading.judging.written_by_hand import SOURCE_CHECKS
from grader.grading.values.failures import NOT_IMPLEMENTED, UNAVAILABLE, WRONG, NamedMistake
from grader.learner import status
from grader.learner.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.learner.options import check_report_target, select_problems
from grader.learner.output import console
from grader.learner.shown import show, write_reports
from grader.locale import marked, tr, translated
from grader.registry import Problem
from grader.reports.report import ProblemSummary, Report
from grader.reports.results import TestResult
from grader.sandbox.wire.limits import DEFAULT_CALL_TIMEOUT, DEFAULT_PROBLEM_BUDGET

# Options of the kata's grade that a copy cannot honour, each with why.
REFUSED = {
    "reference": marked("the copy holds no reference solutions"),
    "submission": marked("the copy grades your problems/ folder only"),
    "classroom": marked("a classroom grade runs the full checks, which the copy does not "
                        "hold"),
    "junit": marked("a report for CI comes from the full grader, which the copy does not "
                    "hold"),
}


def grade(args: argparse.Namespace) -> int:
    for option, why in REFUSED.items():
        if getattr(args, option, None):
            raise UsageError(tr("--{option} is not available in a learners' copy: {why}",
                                option=option, why=translated(why)))
    check_report_target("--json", args.json)
    from grader.registry import problems

    chosen = select_problems(args.problems) if args.problems else list(problems())
    out = console()
    if not args.quiet:
        # Said at once, as the kata's grade says it: a whole grade takes seconds, and a
        # blank terminal meanwhile read as a grade that had not started.
        from rich.markup import escape

        from grader import wording

        out.print("[bold]gpt-kata[/] " + escape(tr("grading {problems} from {source}",
                                                   problems=wording.problems(len(chosen)),
                                                   source="problems/")))
    report = practice_report(chosen, None if args.quiet else out,
                             limits=(args.timeout, args.budget))
    status.record(report)
    if not args.quiet:
        show(report, out, args.verbose)
        from rich.markup import escape

        for line in status.earlier_unpassed(report):
            out.print(f"[dim]{escape(line)}[/]", highlight=False)
        out.print("[dim]" + practice_note() + "[/]", highlight=False)
    written = write_reports(args, report)
    return EXIT_PASS if report.status == "pass" and written else EXIT_FAIL


def practice_report(chosen: list[Problem], out: Any = None,
                    files: dict[Problem, Path] | None = None,
                    limits: tuple[float, float] = (DEFAULT_CALL_TIMEOUT,
                                                   DEFAULT_PROBLEM_BUDGET)) -> Report:
    """The practice grade of the learner's files of `chosen` (or of `files`, a class
    from a notebook written out), as the kata's report; a problem this copy cannot
    practise is left out of it, and said on `out`. Each problem runs in a process of
    its own, each call of the learner's code within `limits` (seconds a call, seconds
    a problem), as the kata's grade runs it (gpt_kata_practice/runs.py)."""
    from gpt_kata_practice.runs import PracticeRuns

    for problem in chosen:
        submission = (files or {}).get(problem, problem.starter)
        if not submission.is_file():
            raise UsageError(tr("{path} is missing; `gpt-kata reset {slug}` puts the "
                                "starter back", path=submission, slug=problem.slug))
    summaries = []
    with PracticeRuns(*limits) as runs:
        for problem in chosen:
            summaries += practice_summary(problem, (files or {}).get(problem, problem.starter),
                                          runs, out)
    return Report(summaries, goldens="stored", platform={
        "python": platform.python_version(), "system": sys.platform}, mode="practice")


def practice_summary(problem: Problem, submission: Path, runs: Any,
                     out: Any) -> list[ProblemSummary]:
    """The problem's summary, or none where this copy cannot practise it."""
    result = runs.grade(problem.slug, submission)
    if result.not_practised:
        if out is not None:
            out.print(f"[yellow]?[/] {problem.folder}: " + tr(
                "not practised here: {why}", why=result.not_practised), highlight=False)
        return []
    results = results_of(problem, result)
    if not result.unavailable:
        results += read_checks(problem, submission)
    return [ProblemSummary(problem, submission, results, notes=[
        tr("{method}() is not practised here: {why}", method=method, why=why)
        for method, why in result.parts_not_practised.items()])]


def read_checks(problem: Problem, submission: Path) -> list[TestResult]:
    """The problem's checks of its file's text (softmax's written by hand), run here, in
    the grader's process, as the kata's grade runs them."""
    results = []
    for name, check in SOURCE_CHECKS.get(problem.slug, []):
        why = check(submission)
        results.append(TestResult(name, problem, "fail" if why else "pass", why,
                                  kind=WRONG if why else "", alike=why))
    return results


def practice_note() -> str:
    return tr("This is a practice grade: the fixed cases and a few drawn examples, judged "
              "against stored answers. Your instructor's grade runs the full checks, with "
              "examples this copy does not hold.")


def results_of(problem: Problem, result: Any) -> list[TestResult]:
    """The kata's results of a practice grade: one a case, or one for a file that
    could not be graded at all."""
    if result.unavailable:
        kind = result.kind or UNAVAILABLE
        message = (tr("not implemented yet (the starter still raises NotImplementedError)")
                   if kind == NOT_IMPLEMENTED else result.unavailable)
        return [TestResult(tr("loading solution.py"), problem, "error", message, kind=kind)]
    results = []
    for check in counted(result.checks):
        named = check.get("mistake")
        mistake = (NamedMistake(named["id"], named["name"], named.get("hint", ""))
                   if named else None)
        results.append(TestResult(
            check["name"], problem, check["status"], check["message"] or "",
            output=check.get("output") or "", arguments=check.get("arguments"),
            got=check.get("got"),
            hint=(mistake.hint if mistake else "") or hint_of(result, check["label"]),
            kind=(check.get("kind") or WRONG) if check["status"] != "pass" else "",
            mistake=mistake,
            alike=check.get("alike") or check["message"] or "",
            cases="drawn" if check.get("drawn") else "fixed"))
    return results


def counted(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checks as the kata counts them: a part's drawn examples are one check, as the
    kata's drawn test is one, failing where any of them fails, with the first failing
    example's evidence; so the copy's points are the kata's wherever both judge alike."""
    out: list[dict[str, Any]] = []
    groups: dict[str, dict[str, Any]] = {}
    for check in checks:
        group = check.get("drawn")
        if not group:
            out.append({**check, "label": check["name"]})
            continue
        if group not in groups:
            groups[group] = {**check, "name": group, "label": check["name"], "seen": 0,
                             "failed": 0}
            out.append(groups[group])
        merged = groups[group]
        merged["seen"] += 1
        if check["status"] != "pass":
            merged["failed"] += 1
            if merged["status"] == "pass":  # the first failing example speaks for them
                merged.update({**check, "name": group, "label": check["name"],
                               "seen": merged["seen"], "failed": merged["failed"]})
    for merged in groups.values():
        inputs = merged.get("inputs") or ""
        # Examples never run (a time-out in an earlier check) have no inputs to head,
        # and none of them failed: their message says why they did not run.
        if merged["failed"] and inputs:
            # Said in the inputs' heading: the mistake stays the last thing the failure
            # says before its inputs, as in the kata's message.
            heading = tr("the inputs of {first} ({failed} of the {seen} drawn examples fail):",
                         first=merged["label"], failed=merged["failed"], seen=merged["seen"])
            message = merged["message"] or ""
            says = message.removesuffix("\n" + inputs)
            shown = heading + inputs.removeprefix(tr("its inputs:"))
            merged["message"], merged["inputs"] = f"{says}\n{shown}", shown
    return out


def hint_of(result: Any, label: str) -> str:
    """A failure's own fix where it names no mistake (an input changed in place)."""
    return next((f.hint for f in result.failures if f.label == label), "")
