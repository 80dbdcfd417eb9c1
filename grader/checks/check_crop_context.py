"""Checks for problem 1, crop-context: keep the last context_length tokens."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import cases
from grader.grading.judges import expect_tensor
from grader.grading.skeleton import Kata, Mistake, check_against_reference
from grader.grading.strategies import GRADING, token_contexts

PROBLEM = "crop-context"
METHOD = "crop_context"
ARG_NAMES = ("context", "context_length")

MISTAKES = [
    Mistake("keep the oldest tokens instead of the newest",
            "the model continues the end of the text: context[:, -context_length:]",
            lambda c, n: c[:, :n]),
    Mistake("drop the batch dimension",
            "slice columns, keep the row: context[:, -context_length:] has shape (1, T')",
            lambda c, n: c[0, -n:]),
    Mistake("keep one token too few", "the window holds exactly context_length tokens",
            lambda c, n: c[:, -(n - 1):] if n > 1 else c[:, :0]),
    Mistake("keep one token too many", "the window holds exactly context_length tokens",
            lambda c, n: c[:, -(n + 1):]),
]


def fixed_args() -> dict[str, tuple]:
    n = cases.context_length()
    return {
        "shorter": (cases.prompt_ids("Tom ran."), n),
        "one-token": (cases.prompt_ids("T"), n),
        "exactly-context-length": (cases.prompt_ids(cases.corpus_prefix(n)), n),
        "one-longer": (cases.prompt_ids(cases.corpus_prefix(n + 1)), n),
        "much-longer": (cases.prompt_ids(cases.corpus_prefix(3 * n + 5)), n),
    }


def check(kata: Kata, args: tuple, case_id: str | None = None) -> None:
    def judge(got, expected) -> None:
        expect_tensor(got, expected, "the cropped context", exact=True)

    check_against_reference(kata, METHOD, args, case_id, judge, MISTAKES, ARG_NAMES)


@pytest.mark.parametrize("case_id", list(fixed_args()))
def test_shipped_contexts(kata: Kata, case_id: str) -> None:
    """The crop of a fixed context"""
    check(kata, fixed_args()[case_id], case_id)


@GRADING
@given(data=st.data())
def test_random_contexts(kata: Kata, data: st.DataObject) -> None:
    """The crop of random contexts and context lengths, against the reference"""
    n = data.draw(st.integers(1, 20), label="context_length")
    context = data.draw(token_contexts(50, max_length=3 * n), label="context")
    check(kata, (context, n))


def test_worked_example(kata: Kata) -> None:
    """A worked example: the last 3 of the tokens 0..4 are 2, 3, 4"""
    got = kata.run(METHOD, torch.arange(5).view(1, 5), 3, arg_names=ARG_NAMES)
    expect_tensor(got, torch.tensor([[2, 3, 4]]), "crop_context(arange(5).view(1, 5), 3)",
                  exact=True)
