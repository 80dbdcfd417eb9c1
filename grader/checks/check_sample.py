"""Checks for problem 4, sample: one draw with a reproducible generator."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import cases
from grader.grading.judges import expect_tensor
from grader.grading.skeleton import GradeFailure, Kata, raised
from grader.grading.strategies import GRADING, logits
from grader.model import artifacts

PROBLEM = "sample"
METHOD = "sample"
ARG_NAMES = ("probs", "generator", "initial_state")


def generator_args(probs: torch.Tensor, seed: int) -> tuple:
    generator = torch.Generator().manual_seed(seed)
    return (probs, generator, generator.get_state())


@torch.no_grad()
def shipped_probs(prompt: str) -> torch.Tensor:
    model = artifacts.shipped_model()
    return torch.softmax(model(cases.prompt_ids(prompt))[:, -1, :], dim=-1)


def fixed_args() -> dict[str, tuple]:
    one_hot = torch.zeros(1, 40)
    one_hot[0, 7] = 1.0
    return {
        "after-a-prompt": generator_args(shipped_probs("Once upon a time, there was a"), 0),
        "word-boundary": generator_args(shipped_probs("The little fox saw the"), 0),
        "other-seed": generator_args(shipped_probs("Tom"), 1234),
        "uniform": generator_args(torch.full((1, 10), 0.1), 0),
        "certain": generator_args(one_hot, 0),
    }


def check(kata: Kata, args: tuple, case_id: str | None = None) -> None:
    probs, generator, initial_state = args
    got, live = kata.compare(METHOD, *args, arg_names=ARG_NAMES)
    expected = kata.expected(case_id, live) if case_id else live
    if got[0] == "error":
        raise GradeFailure(raised(METHOD, got))
    token = got[1]
    if isinstance(token, int) and not isinstance(token, bool):
        raise GradeFailure("sample() returned a plain int; return the (1, 1) LongTensor "
                           "that torch.multinomial(probs, 1, generator=generator) gives")
    after = kata.last.after.get(1) if kata.last.after else None
    restored = after is not None and torch.equal(after.get_state(), initial_state)
    try:
        expect_tensor(token, expected, "the sampled token", exact=True)
    except GradeFailure as failure:
        hint = ""
        if isinstance(token, torch.Tensor) and token.numel() == 1 and int(
                token.flatten()[0]) == int(probs.argmax()):
            hint = ("\nThat is the most likely token: sample with torch.multinomial "
                    "instead of taking the argmax.")
        elif after is not None and torch.equal(after.get_state(), initial_state) and \
                int(probs.max()) != 1:
            hint = ("\nThe generator passed in was never used: pass it to torch.multinomial "
                    "with generator=generator instead of using the global random state.")
        raise GradeFailure(failure.message + hint) from None
    if not restored:
        raise GradeFailure("the generator was not put back to initial_state after the draw: "
                           "call generator.set_state(initial_state) after torch.multinomial")


@pytest.mark.parametrize("case_id", list(fixed_args()))
def test_fixed_distributions(kata: Kata, case_id: str) -> None:
    """A draw from a fixed distribution, and the generator restored"""
    check(kata, fixed_args()[case_id], case_id)


@GRADING
@given(x=logits(rows=1, max_vocab=30), seed=st.integers(0, 2**32 - 1))
def test_random_distributions(kata: Kata, x: torch.Tensor, seed: int) -> None:
    """Draws from random distributions and seeds, against the reference"""
    check(kata, generator_args(torch.softmax(x, dim=-1), seed))
