"""Checks for problem 3, softmax: by hand, and stable."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from hypothesis import given

from grader.grading.judges import expect_tensor
from grader.grading.skeleton import GradeFailure, Kata, Mistake, check_against_reference
from grader.grading.strategies import GRADING, logits

PROBLEM = "softmax"
METHOD = "softmax"
ARG_NAMES = ("logits",)
BUILT_INS = {"softmax", "log_softmax", "softmin"}

MISTAKES = [
    Mistake("skip subtracting the maximum", "exp(1e4) is inf and inf/inf is nan: "
            "subtract logits.max(dim=-1, keepdim=True).values first",
            lambda x: torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)),
    Mistake("normalise over the wrong dimension", "sum over the last dimension: dim=-1",
            lambda x: torch.exp(x - x.max()) / torch.exp(x - x.max()).sum(dim=0, keepdim=True)),
    Mistake("forget to divide by the sum", "probabilities must add up to 1 in every row",
            lambda x: torch.exp(x - x.max(dim=-1, keepdim=True).values)),
]


def fixed_args() -> dict[str, tuple]:
    return {
        "small-vector": (torch.tensor([1.0, 2.0, 3.0]),),
        "batch-of-rows": (torch.tensor([[0.0, 1.0, -1.0, 2.0], [5.0, 5.0, 5.0, 5.0]]),),
        "huge-logits": (torch.tensor([[1e4, 1e4 - 1.0, -1e4]]),),
        "minus-infinity": (torch.tensor([[2.0, float("-inf"), 0.5, float("-inf")]]),),
        "three-dims": (torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 7,),
        "float64": (torch.tensor([[0.1, 0.2, 0.3]], dtype=torch.float64),),
    }


def same_probabilities(got, expected) -> None:
    expect_tensor(got, expected, "the probabilities")
    if got.dtype != expected.dtype:
        raise GradeFailure(f"the probabilities are {got.dtype}, but the logits were "
                           f"{expected.dtype}: keep the input's dtype")


def check(kata: Kata, args: tuple, case_id: str | None = None) -> None:
    check_against_reference(kata, METHOD, args, case_id, same_probabilities, MISTAKES,
                            ARG_NAMES)


@pytest.mark.parametrize("case_id", list(fixed_args()))
def test_fixed_logits(kata: Kata, case_id: str) -> None:
    """Softmax of fixed logits"""
    check(kata, fixed_args()[case_id], case_id)


@GRADING
@given(x=logits())
def test_random_logits(kata: Kata, x: torch.Tensor) -> None:
    """Softmax of random logits, with huge values and -inf, against the reference"""
    check(kata, (x,))


def test_written_by_hand(kata: Kata) -> None:
    """Written by hand, without a library softmax"""
    path = Path(kata.submission.path)
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return  # loading the submission reports this better
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else (
            node.id if isinstance(node, ast.Name) else None)
        if name in BUILT_INS:
            raise GradeFailure(f"{path.name}:{node.lineno} uses {name}; this problem is to "
                               "write softmax yourself with exp, max and sum")
