"""Checks for problem 3, softmax: by hand, and stable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_tensor
from grader.grading.judging.written_by_hand import SOURCE_CHECKS
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import logits
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import logit_scale_rtol
from grader.locale import marked
from grader.wording import Plural


def skip_subtracting_the_maximum(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def normalise_over_the_wrong_dimension(x):
    return torch.exp(x - x.max()) / torch.exp(x - x.max()).sum(dim=0, keepdim=True)


def normalise_over_the_wrong_dimension_shifted_by_its_maximum(x):
    exps = torch.exp(x - x.max(dim=0, keepdim=True).values)
    return exps / exps.sum(dim=0, keepdim=True)


def subtract_the_whole_tensors_maximum(x):
    exps = torch.exp(x - x.max())
    return exps / exps.sum(dim=-1, keepdim=True)


def forget_to_divide_by_the_sum(x):
    return torch.exp(x - x.max(dim=-1, keepdim=True).values)


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    return {
        "small-vector": (torch.tensor([1.0, 2.0, 3.0]),),
        "batch-of-rows": (torch.tensor([[0.0, 1.0, -1.0, 2.0], [5.0, 5.0, 5.0, 5.0]]),),
        "huge-logits": (torch.tensor([[1e4, 1e4 - 1.0, -1e4]]),),
        "minus-infinity": (torch.tensor([[2.0, float("-inf"), 0.5, float("-inf")]]),),
        "three-dims": (torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 7,),
        "float64": (torch.tensor([[0.1, 0.2, 0.3]], dtype=torch.float64),),
        # One maximum for the whole tensor shifts the lower row's exponentials to 0.
        "rows-far-apart": (torch.tensor([[0.0, 1.0, 2.0], [1e4, 1e4 + 1.0, 1e4 - 1.0]]),),
    }


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    expect_tensor(got, expected, Plural(marked("the probabilities")),
                  rtol=logit_scale_rtol(call.args[0]), same_dtype_as=marked("the logits"))


# The learners' copy judges its stored probabilities by the same tolerance (a rule of
# grader/release/practice/judge.py).
PRACTICE_RULE = "logit-scale"

CONTRACT = Contract(cases=cases, mistakes=MISTAKES, judge=judge)

test_fixed_logits, test_random_logits = CONTRACT.tests(
    "Softmax of fixed logits",
    "Softmax of random logits, with huge values and -inf, against the reference",
    lambda data: (data.draw(logits(), label="logits"),))


def test_written_by_hand(kata: Kata) -> None:
    """Written by hand, without a library softmax"""
    ((_name, check),) = SOURCE_CHECKS["softmax"]
    why = check(Path(kata.submission.path))
    if why:
        raise GradeFailure(why)
