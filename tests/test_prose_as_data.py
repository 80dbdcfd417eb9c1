"""What one module tells another travels as data, not as words read back out of a
message: the plural the logits take, a check's name in the JUnit report, the layers a
worker could not set up, a harness named in a call."""

from __future__ import annotations

import pytest
import torch

from grader.grading.failures import GradeFailure
from grader.grading.filter_judges import expect_filtered


def test_the_filtered_logits_take_a_plural_verb() -> None:
    logits = torch.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(GradeFailure) as failed:
        expect_filtered(torch.tensor([1.0, 2.0]), logits, logits)
    assert str(failed.value).startswith("the filtered logits have shape (2,)")


def test_a_report_carries_each_check_s_own_name(tmp_path) -> None:
    from test_scores_formats import a_report

    from grader.grading.junit import junit_tree

    report = a_report(tmp_path, {"decode": ["pass", "fail"]}).to_json()
    assert [t["check"] for t in report["tests"]] == ["check 0", "check 1"]
    # JUnit names a case by that field, whatever the one-line `name` shows.
    for test in report["tests"]:
        test["name"] = "shown otherwise"
    cases = junit_tree(report).getroot().iter("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("05-decode", "check 0"), ("05-decode", "check 1")]
