"""Answers of an odd shape or size fail with a message the learner can act on; the
judge never raises an error of its own (the report would call it the grader's)."""

from __future__ import annotations

import pytest
import torch

from grader.checks.adamw import check_adamw
from grader.checks.lr_schedule import check_lr_schedule
from grader.grading.judging.filtered_logits import same_filtering
from grader.grading.subject.kata import Call
from grader.grading.values.failures import GradeFailure


def call_with(args: tuple) -> Call:
    return Call("method", args, {}, ("value", None), None)  # type: ignore[arg-type]


@pytest.mark.parametrize("rate", [10**400, -10**400])
def test_a_rate_too_large_for_a_float_is_a_wrong_rate(rate: int) -> None:
    step_args = (3, 1e-3, 1e-4, 2, 10)
    with pytest.raises(GradeFailure, match="the learning rate at step 3 is -?inf"):
        check_lr_schedule.judge(rate, 1e-3, call_with(step_args))
    assert not check_lr_schedule.same_rate(("value", 1e-3), ("value", rate))
    assert not check_lr_schedule.same_rate(("value", rate), ("value", 1e-3))


@pytest.mark.parametrize("odd", [5, None, torch.zeros(2)])
def test_adamw_state_that_is_not_a_list_is_a_wrong_answer(odd: object) -> None:
    params = [torch.ones(2)]
    expected = (params, [torch.zeros(2)], [torch.zeros(2)])
    with pytest.raises(GradeFailure, match="the exp_avgs returned are .*, not a list of tensors"):
        check_adamw.judge((params, odd, [torch.zeros(2)]), expected, call_with(()))


@pytest.mark.parametrize("odd", [1.5, 10**4000, True])
def test_a_number_for_filtered_logits_is_no_known_mistake(odd: object) -> None:
    # A tensor compared with a number gives a tensor (or raises, for an int too long for
    # one): a mistake's filtered logits are then no match, never an error.
    logits = torch.zeros(1, 5)
    assert not same_filtering(("value", odd), ("value", logits))
    assert not same_filtering(("value", logits), ("value", odd))


def test_a_diagnosis_that_fails_leaves_the_failure_its_message() -> None:
    # The diagnosis runs as pytest reports the check: raised there, it ended the grade.
    failure = GradeFailure("the answer is wrong", lambda: str(int(float("nan"))))
    assert str(failure).startswith("the answer is wrong")
    assert "could not name the mistake: ValueError" in str(failure)
