"""Checks for problem 3, softmax: by hand, and stable."""

from __future__ import annotations

import ast
from pathlib import Path

import torch

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import comparing, expect_tensor
from grader.grading.subject.kata import Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import logits
from grader.grading.values.failures import GradeFailure
from grader.locale import marked, tr
from grader.wording import Plural

BUILT_INS = {"softmax", "log_softmax", "softmin"}

def skip_subtracting_the_maximum(x):
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def normalise_over_the_wrong_dimension(x):
    return torch.exp(x - x.max()) / torch.exp(x - x.max()).sum(dim=0, keepdim=True)


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
    }


CONTRACT = Contract(cases=cases, mistakes=MISTAKES,
                    judge=comparing(expect_tensor, Plural(marked("the probabilities")),
                                    same_dtype_as=marked("the logits")))

test_fixed_logits, test_random_logits = CONTRACT.tests(
    "Softmax of fixed logits",
    "Softmax of random logits, with huge values and -inf, against the reference",
    lambda data: (data.draw(logits(), label="logits"),))


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
            raise GradeFailure(tr("{file}:{line} uses {name}; this problem is to write "
                                  "softmax yourself with exp, max and sum", file=path.name,
                                  line=node.lineno, name=name))
