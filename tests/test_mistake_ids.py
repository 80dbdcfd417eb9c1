"""Failures as data: every named mistake has a stable id, well formed and its own within
its problem; a failure says its kind; the report carries both without reading messages.

expected.toml files and gradebooks refer to mistakes by id (the JSON report's
`mistake.id`), so two mistakes of one problem must never share one, and an id
must read as "<problem slug>/<kebab-case words>".
"""

from __future__ import annotations

import pytest

from grader.grading.contracts.declaring import load_check_module
from grader.grading.values.failures import MISTAKE_ID, Mistake, kebab
from grader.maintainer.catalogs import mistakes_in
from grader.registry import Problem, problems


def mistakes_of(module: object) -> list[Mistake]:
    """The module's contract's mistakes and every other it holds, alone or in a list."""
    return mistakes_in(module, Mistake)


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.slug)
def test_each_mistake_id_is_well_formed_and_names_one_mistake(problem: Problem) -> None:
    module = load_check_module(problem)
    by_id: dict[str, str] = {}
    for mistake in mistakes_of(module):
        named = mistake.named(problem.slug)
        assert MISTAKE_ID.fullmatch(named.id), f"{named.id!r} is not <slug>/<kebab-case>"
        assert named.id.startswith(f"{problem.slug}/")
        other = by_id.setdefault(named.id, mistake.name)
        assert other == mistake.name, f"{named.id} names both {other!r} and {mistake.name!r}"


def test_an_id_is_the_name_in_kebab_case_unless_given() -> None:
    assert kebab("return a list, not a str") == "return-a-list-not-a-str"
    aside = Mistake("use ReLU (max(x, 0), as GPT-1 did not) instead of GELU", "", print)
    assert aside.named("gpt").id == "gpt/use-relu-instead-of-gelu"
    derived = Mistake("Do not crop the context", "crop it", print)
    assert derived.named("generate").id == "generate/do-not-crop-the-context"
    kept = Mistake("forget to crop the context", "crop it", print, id="do-not-crop-the-context")
    assert kept.named("generate").id == "generate/do-not-crop-the-context"



def test_a_failure_says_what_kind_it_is() -> None:
    from grader.grading.engine.plugin import NotRun
    from grader.grading.values.failures import (
        NOT_IMPLEMENTED,
        STUCK,
        UNAVAILABLE,
        WRONG,
        GradeFailure,
        SubmissionUnavailable,
    )
    from grader.grading.values.worker_errors import unavailable_kind

    assert GradeFailure("wrong token").kind == WRONG
    assert SubmissionUnavailable("SyntaxError: invalid syntax").kind == UNAVAILABLE
    assert NotRun("not run: timed out").kind == STUCK
    assert unavailable_kind({"type": "NotImplementedError", "message": "",
                             "file": "solution.py", "line": 9}) == NOT_IMPLEMENTED
    # torch's, for an nn.Module with no forward: raised outside the learner's files.
    assert unavailable_kind({"type": "NotImplementedError", "message": 'Module [Head] is '
                             'missing the required "forward" function'}) == UNAVAILABLE
    assert unavailable_kind({"type": "SyntaxError", "message": "invalid"}) == UNAVAILABLE


def test_the_json_report_names_the_mistake_by_id(tmp_path) -> None:
    from grader.grading.engine.plugin import TestResult
    from grader.grading.values.failures import NOT_IMPLEMENTED, WRONG, NamedMistake
    from grader.registry import find
    from grader.reports.report import ProblemSummary, Report

    problem = find("generate")
    named = NamedMistake("generate/do-not-crop-the-context", "do not crop the context",
                         "crop to the last context_length tokens")
    wrong = TestResult("a check", problem, "fail", "differs", kind=WRONG, mistake=named,
                       hint=named.hint)
    plain = TestResult("another", problem, "fail", "differs", kind=WRONG)
    tests = Report([ProblemSummary(problem, tmp_path / "solution.py", [wrong, plain])],
                   "exact", {}).to_json()["tests"]
    assert tests[0]["mistake"] == {"id": "generate/do-not-crop-the-context",
                                   "name": "do not crop the context",
                                   "hint": "crop to the last context_length tokens"}
    assert tests[0]["kind"] == "wrong" and tests[1]["mistake"] is None
    # The starter is told by the kind of its failures, not by their words.
    starter = TestResult("a check", problem, "error", "anything at all", kind=NOT_IMPLEMENTED)
    assert ProblemSummary(problem, tmp_path / "solution.py", [starter]).untouched
    assert not ProblemSummary(problem, tmp_path / "solution.py", [wrong]).untouched


def test_cases_failing_alike_are_shown_once(tmp_path) -> None:
    from io import StringIO

    from rich.console import Console

    from grader.grading.engine.plugin import TestResult
    from grader.registry import find
    from grader.reports.report import ProblemSummary, Report, render

    problem = find("generate")
    results = [TestResult(f"case {c}", problem, "fail", f"differs\nthe inputs of case {c}",
                          kind="wrong", alike="differs") for c in "ab"]
    results.append(TestResult("case c", problem, "fail", "differs otherwise", kind="wrong",
                              alike="differs otherwise"))
    out = StringIO()
    render(Report([ProblemSummary(problem, tmp_path / "s.py", results)], "exact", {}),
           Console(file=out, width=200))
    shown = out.getvalue()
    assert "case a" in shown and "case b" not in shown and "case c" in shown
