"""What one module tells another travels as data, not as words read back out of a
message: the plural the logits take, a check's name in the JUnit report, a harness
named in a call (the layers a worker could not set up: test_unsandboxed_notice.py)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from grader.grading.judging.filtered_logits import expect_filtered
from grader.grading.values.failures import GradeFailure


def test_the_filtered_logits_take_a_plural_verb() -> None:
    logits = torch.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(GradeFailure) as failed:
        expect_filtered(torch.tensor([1.0, 2.0]), logits, logits)
    assert str(failed.value).startswith("the filtered logits have shape (2,)")


def test_a_report_carries_each_check_s_own_name(tmp_path) -> None:
    from test_scores_formats import a_report

    from grader.reports.junit import junit_tree

    report = a_report(tmp_path, {"decode": ["pass", "fail"]}).to_json()
    assert [t["check"] for t in report["tests"]] == ["check 0", "check 1"]
    # JUnit names a case by that field, whatever the one-line `name` shows.
    for test in report["tests"]:
        test["name"] = "shown otherwise"
    cases = junit_tree(report).getroot().iter("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("05-decode", "check 0"), ("05-decode", "check 1")]


def test_a_harness_is_named_and_read_in_one_place() -> None:
    from grader.sandbox.worker.harness_ref import harness_name, harness_ref

    assert harness_name(harness_ref("loss_backward")) == "loss_backward"
    assert harness_name("greedy") is None  # a method of the submission's
    # Only the harnesses themselves: not a helper, an exception class or a misspelling.
    for name in ("loss_backwards", "_unwritten", "WordStreamerNotWritten", ""):
        with pytest.raises(ValueError, match="no harness called"):
            harness_ref(name)
        with pytest.raises(ValueError, match="no harness called"):
            harness_name(f"harness:{name}")


def test_a_contract_s_misspelt_harness_fails_where_it_is_named() -> None:
    from grader.checks.clip_grad_norm.check_clip_grad_norm import CONTRACT

    assert CONTRACT.harness and CONTRACT.called == f"harness:{CONTRACT.harness}"
    with pytest.raises(ValueError, match="no harness called 'clip_gradient'"):
        _ = dataclasses.replace(CONTRACT, harness="clip_gradient").called
