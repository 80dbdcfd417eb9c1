"""A grading run's results: the terminal view for learners, the JSON for CI.

The JSON follows the Exercism test-runner v3 shape (`version`, `status`,
`message`, `tests[]` with `name`, `status`, `message`, `output`, `test_code`,
`task_id`) and adds Gradescope's `score`/`max_score`, so either platform can
read it with a thin mapping. Each test also carries its `check`, the check's own
name (`name` is it after the problem's folder, for a reader that shows one line),
its `hint` (the fixes its message offers, shown on request), its failure's `kind`
(grading/values/failures.py) and the known `mistake` it names as `{id, name, hint}`, so
that nothing reading the report needs to read its messages. A failure of a contract's check also
carries the failing call as data: its `inputs`, each argument by name with what
it was, and what the call gave (`got`), described alike and cut to INPUT_LIMIT.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from grader.grading.values.failures import NOT_IMPLEMENTED
from grader.grading.values.sanitise import visible
from grader.locale import localised, tr, translated
from grader.registry import Problem
from grader.reports.provenance import provenance
from grader.reports.results import TestResult, nothing_handed_in
from grader.reports.scoring import format_points, score_report
from grader.reports.written import write_whole
from grader.sandbox.wire.printed import Printed, after, as_printed, marker, more
from grader.sandbox.wire.printed import line as shown_line
from grader.wording import glyph

REPORT_OUTPUT_LIMIT = 500  # characters of printed output in the JSON report
SHOWN_OUTPUT = (10, 500)  # lines and characters of it on the terminal
INPUT_LIMIT = 300  # characters of each argument's description, and the answer's, in the JSON


def cut_value(text: str | None) -> str | None:
    """A description cut to INPUT_LIMIT characters, saying so."""
    if text is None or len(text) <= INPUT_LIMIT:
        return text
    return text[:INPUT_LIMIT] + f"... ({len(text)} characters)"


def cut_output(output: Printed | str, limit: int = REPORT_OUTPUT_LIMIT,
               max_lines: int | None = None, whole: bool = False) -> str:
    """What the code printed, cut at a line end to fit in `limit` characters, with a
    marker saying how many printed lines were left out, counting those that earlier
    cuts left out (grader/sandbox/wire/printed.py); a single line longer than the limit is
    cut inside it. With `whole`, the marker fits in the limit too: Exercism caps the
    whole `output` field at 500 characters."""
    printed = as_printed(output)
    items, text = printed.items, printed.text
    if len(text) <= limit and (max_lines is None or len(items) <= max_lines):
        return text
    rest = after(items)
    kept: list[str] = []
    size = 0
    for index, item in enumerate(items):
        left = rest[index + 1]  # printed lines after this one, were it kept
        room = len("\n" + marker(left)) if whole and left else 0
        if (size + len(shown_line(item)) + room > limit
                or (max_lines is not None and len(kept) == max_lines)):
            break
        kept.append(shown_line(item))
        size += len(shown_line(item))
    if not kept:
        rest_text = f", {more(rest[1])}" if rest[1] else ""
        end = f"… (the line goes on{rest_text}; output truncated)"
        return shown_line(items[0])[:max(limit - len(end), 0) if whole else limit] + end
    end = "" if kept[-1].endswith("\n") else "\n"
    return "".join(kept) + end + marker(rest[len(kept)])


@dataclass
class ProblemSummary:
    problem: Problem
    submission: Path
    results: list[TestResult] = field(default_factory=list)
    # Left out of a classroom hand-in: graded as nothing, its points still counted.
    missing: bool = False
    # What the report says of the problem beyond its checks, under its result (a part
    # of it that a learners' copy does not practise).
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.status == "pass" for r in self.results)

    @property
    def untouched(self) -> bool:
        """Still the starter: every check stopped at NotImplementedError."""
        return bool(self.results) and all(r.kind == NOT_IMPLEMENTED for r in self.results)

    @property
    def status(self) -> str:
        if self.missing:
            return "missing"
        if not self.results:
            return "error"
        if all(r.status == "pass" for r in self.results):
            return "pass"
        return "error" if any(r.status == "error" for r in self.results) and all(
            r.message == self.results[0].message for r in self.results) else "fail"


@dataclass
class Report:
    summaries: list[ProblemSummary]
    goldens: str  # "exact" or "live-only"
    platform: dict[str, str]
    internal_errors: list[str] = field(default_factory=list)
    # The sandbox layers the workers ran under; empty when they ran unisolated.
    isolation: list[str] = field(default_factory=list)
    mode: str = "practice"  # or "classroom": files graded as untrusted data

    @property
    def status(self) -> str:
        """Exercism's run status: `error` when the grader failed or nothing could be
        graded (every check errored, as for a file that does not import)."""
        results = [r for s in self.summaries for r in s.results]
        if self.internal_errors or (results and all(r.status == "error" for r in results)):
            return "error"
        return "pass" if all(s.status == "pass" for s in self.summaries) else "fail"

    @property
    def message(self) -> str | None:
        """The run's message: the grader's errors, or why nothing could be graded."""
        if self.internal_errors:
            return "\n".join(self.internal_errors)
        if self.status == "error":
            errors = [r.message for s in self.summaries if not s.missing
                      for r in s.results if r.message]
            if errors:
                return errors[0]
            missing = sum(s.missing for s in self.summaries)
            return nothing_handed_in(missing) if missing else tr("no checks ran")
        return None

    def to_json(self) -> dict:
        tests = []
        for summary in self.summaries:
            for r in summary.results:
                output = cut_output(r.output, REPORT_OUTPUT_LIMIT, whole=True)
                tests.append({
                    "name": f"{summary.problem.folder}: {r.name}",
                    "check": r.name,
                    "problem": summary.problem.slug,
                    "task_id": summary.problem.number,
                    "status": r.status,
                    "message": r.message or None,
                    "output": output or None,
                    "test_code": r.test_code,
                    "hint": r.hint or None,
                    "kind": r.kind or None,
                    "cases": r.cases or None,
                    "mistake": ({"id": r.mistake.id, "name": r.mistake.name,
                                 "hint": r.mistake.hint} if r.mistake else None),
                    "inputs": ({name: cut_value(what) for name, what in r.arguments.items()}
                               if r.arguments is not None else None),
                    "got": cut_value(r.got),
                })
        report = {
            "version": 3,
            "status": self.status,
            "message": self.message,
            "score": 0,
            "max_score": 0,
            "problems": [
                {"problem": s.problem.slug, "number": s.problem.number, "status": s.status,
                 "passed": s.passed, "total": len(s.results), "max_score": s.problem.points,
                 "submission": None if s.missing else visible(s.submission)}
                for s in self.summaries
            ],
            "goldens": self.goldens,
            "platform": self.platform,
            "mode": self.mode,
            "isolation": self.isolation,
            "provenance": provenance(
                {s.problem.folder: s.submission for s in self.summaries},
                self.isolation, self.mode),
            "tests": tests,
        }
        return score_report(report)

    def write_json(self, path: Path) -> None:
        """Written whole or not at all (grader/reports/written.py)."""
        write_whole(path, json.dumps(self.to_json(), indent=2) + "\n")


def check_title(name: str) -> str:
    """A check's name as a learner reads it: its title in the language in use, and the
    case it ran, as it is ("Softmax of fixed logits [one-row]"). The case is the last
    bracket: a title may hold one of its own ("top_p outside [0, 1] raises ValueError
    [1.5]"), and no title ends with one (each ends in words)."""
    title, bracket, case = name.rpartition(" [") if name.endswith("]") else ("", "", "")
    return translated(title) + f" [{case}" if bracket else translated(name)


# How a learner at the terminal asks for a problem's hint; a notebook asks otherwise.
HINT_COMMAND = "gpt-kata hint {slug}"


def render(report: Report, console: Console, verbose: bool = False,
           asking: str = HINT_COMMAND) -> None:
    """The report for a learner's eyes. Its learner text was made visible when the
    results were recorded (grading/engine/session.py); the marks fall back to words where
    the console's encoding has no check mark (cp1252, ASCII). `asking` is how the
    learner asks for a problem's hint where they graded it ({slug} in it its slug)."""
    # One column for the folder names, at least as wide as it always was.
    w = max([22, *(len(s.problem.folder) for s in report.summaries)])
    scored = score_report(report.to_json())
    uncounted = {e.get("problem") for e in scored.get("problems", [])
                 if e.get("fixed_counted") is False}
    # Advice for the learner at the keyboard (a hint to ask for, the next statement to
    # read); a classroom grade's reader is the instructor, whose kata it is not.
    advice = report.mode != "classroom"
    for summary in report.summaries:
        show_problem(console, summary, verbose, w, summary.problem.slug in uncounted,
                     asking if advice else "")
        for note in summary.notes:
            console.print(f"  [dim]? {escape(note)}[/]", highlight=False)
    for error in report.internal_errors:
        console.print(f"[red]{tr('grader error:')}[/] {escape(error.splitlines()[0])}")
    passed = sum(s.status == "pass" for s in report.summaries)
    colour = "green" if report.status == "pass" else "red"
    console.print(f"[{colour}]" + tr("{passed}/{problems} problems pass, {score}/{max_score} "
                                     "points", passed=passed, problems=len(report.summaries),
                                     score=format_points(scored["score"]),
                                     max_score=format_points(scored["max_score"])) + "[/]")
    todo = [s for s in report.summaries if s.status != "pass"]
    if todo and advice:
        statement = localised(todo[0].problem.statement).name
        console.print(tr("next: {statement}",
                         statement=f"problems/{todo[0].problem.folder}/{statement}"),
                      style="dim")


def show_problem(console: Console, summary: ProblemSummary, verbose: bool, w: int,
                 uncounted: bool, asking: str = HINT_COMMAND) -> None:
    """One problem's lines of the report: its result, and its failures as they are
    shown (the first three ways it fails, unless `verbose`); with `asking`, how the
    learner may ask for its hint."""
    ok, bad = glyph(console, "✓", "PASS"), glyph(console, "✗", "FAIL")
    more = glyph(console, "…", "...")
    p = summary.problem
    total = len(summary.results)
    if summary.status == "pass":
        console.print(f"[green]{ok}[/] {p.folder:<{w}} "
                      + tr("{passed}/{total} checks pass", passed=summary.passed,
                           total=total))
        return
    failures = [r for r in summary.results if r.status != "pass"]
    if not failures:
        console.print(f"[red]{bad}[/] {p.folder:<{w}} " + tr("no checks ran"))
        return
    if summary.status in ("error", "missing"):
        console.print(f"[red]{bad}[/] {p.folder:<{w}} {escape(failures[0].message)}")
        return
    console.print(f"[red]{bad}[/] {p.folder:<{w}} "
                  + tr("{failed}/{total} checks fail", failed=len(failures), total=total))
    if uncounted:
        console.print("  [dim]" + tr("its other checks earn no points while its drawn "
                                     "examples fail (classroom mode: the learners' copy "
                                     "holds the fixed cases' answers)") + "[/]")
    shown: set[str] = set()
    for r in failures:
        # Cases that fail the same way differ only in their inputs: one is shown.
        if r.alike in shown and not verbose:
            continue
        shown.add(r.alike)
        console.print(f"  [bold]{escape(check_title(r.name))}[/]")
        for line in r.message.splitlines():
            console.print(f"    {escape(line)}", highlight=False)
        if r.output:
            printed = cut_output(r.output, SHOWN_OUTPUT[1], SHOWN_OUTPUT[0])
            printed = printed.replace("…", more).splitlines()
            if len(printed) == 1:
                console.print("    [dim]" + tr("your code printed: {output}",
                                                 output=escape(printed[0])) + "[/]",
                              highlight=False)
            else:
                console.print("    [dim]" + tr("your code printed:") + "[/]")
                for line in printed:
                    console.print(f"      [dim]{escape(line)}[/]", highlight=False)
        if len(shown) >= 3 and not verbose:
            break
    if asking and (any(r.hint for r in failures) or p.hints):
        console.print("  [dim]" + escape(tr("stuck? `{command}`",
                                            command=asking.format(slug=p.slug))) + "[/]")
