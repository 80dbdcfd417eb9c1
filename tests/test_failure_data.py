"""A failing check's call as data: the JSON report carries its inputs by name and what it
gave, described as the message shows them, so that nothing reading the report needs to
read the message for them."""

from __future__ import annotations

import torch
from conftest import messages

# Keeps the oldest tokens instead of the most recent: a wrong answer on every case that
# needs cropping, with a known mistake's name.
WRONG_END = '''
class Solution:
    def crop_context(self, context, context_length):
        return context[:, :context_length]
'''


def test_a_failed_check_carries_its_inputs_and_answer(grade_here, tmp_path) -> None:
    submission = tmp_path / "solution.py"
    submission.write_text(WRONG_END, encoding="utf-8")
    report = grade_here("crop-context", submission)
    # The contract's checks: its fixed cases and its drawn examples (a check module's
    # own test of a worked example has no contract to describe its call).
    failed = [t for t in report["tests"] if t["status"] == "fail"
              and t["name"].startswith("01-crop-context: The crop of")]
    assert len(failed) >= 3, messages(report)
    for test in failed:
        inputs = test["inputs"]
        assert list(inputs) == ["context", "context_length"], test
        # Each input is described in the message under the same name.
        for name, what in inputs.items():
            assert f"  {name}: {what}" in test["message"], (name, test["message"])
        assert test["got"].startswith("int64 tensor of shape (1, "), test
    passed = [t for t in report["tests"] if t["status"] == "pass"]
    assert all(t["inputs"] is None and t["got"] is None for t in passed)


def test_the_answer_is_described_as_the_inputs_are() -> None:
    from grader.grading.subject.inputs import answer_of, describe

    value = torch.tensor([[3, 1, 2]])
    assert answer_of(("value", value)) == describe(value)
    assert answer_of(("error", "ValueError: no")) == "raised ValueError: no"


def test_the_report_cuts_and_escapes_the_call(tmp_path) -> None:
    from grader.grading.engine.plugin import TestResult
    from grader.grading.engine.session import safe
    from grader.grading.values.failures import WRONG
    from grader.registry import find
    from grader.reports.report import INPUT_LIMIT, ProblemSummary, Report

    problem = find("crop-context")
    long = "x" * (INPUT_LIMIT + 50)
    result = safe(TestResult("a check", problem, "fail", "differs", kind=WRONG,
                             arguments={"context": long, "context_length": "3\x1b[2J"},
                             got="'\u202eevil'"))
    (test,) = Report([ProblemSummary(problem, tmp_path / "s.py", [result])], "exact",
                     {}).to_json()["tests"]
    assert test["inputs"]["context"].startswith("x" * INPUT_LIMIT + "... (")
    assert len(test["inputs"]["context"]) < INPUT_LIMIT + 30
    assert test["inputs"]["context_length"] == "3\\x1b[2J"
    assert test["got"] == "'\\u202eevil'"
