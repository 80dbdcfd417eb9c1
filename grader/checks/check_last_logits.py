"""Checks for problem 2, last-logits: one forward pass, keep the last position."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import cases
from grader.grading.judges import expect_tensor
from grader.grading.skeleton import Kata, Mistake, check_against_reference
from grader.grading.strategies import GRADING, random_models, token_contexts

PROBLEM = "last-logits"
METHOD = "last_logits"
ARG_NAMES = ("model", "context")

MISTAKES = [
    Mistake("return the logits of every position",
            "the next token is predicted at the last position only: logits[:, -1, :]",
            lambda m, c: m(c)),
    Mistake("take the first position instead of the last",
            "position -1 predicts what comes after the whole context: logits[:, -1, :]",
            lambda m, c: m(c)[:, 0, :]),
    Mistake("drop the batch dimension", "keep shape (1, vocab_size): logits[:, -1, :]",
            lambda m, c: m(c)[0, -1, :]),
    Mistake("apply softmax", "return raw logits; softmax is the next problem",
            lambda m, c: torch.softmax(m(c)[:, -1, :], dim=-1)),
]


def fixed_args() -> dict[str, tuple]:
    n = cases.context_length()
    return {
        "one-token": (cases.SHIPPED, cases.prompt_ids("\n")),
        "a-sentence": (cases.SHIPPED, cases.prompt_ids("Once upon a time, there was a")),
        "full-window": (cases.SHIPPED, cases.prompt_ids(cases.corpus_prefix(n))),
    }


def check(kata: Kata, args: tuple, case_id: str | None = None) -> None:
    def judge(got, expected) -> None:
        expect_tensor(got, expected, "the last position's logits")

    check_against_reference(kata, METHOD, args, case_id, judge, MISTAKES, ARG_NAMES)


@pytest.mark.parametrize("case_id", list(fixed_args()))
def test_shipped_model(kata: Kata, case_id: str) -> None:
    """The last logits of the shipped model for a fixed prompt"""
    check(kata, fixed_args()[case_id], case_id)


@GRADING
@given(data=st.data())
def test_random_models(kata: Kata, data: st.DataObject) -> None:
    """The last logits of small random models, against the reference"""
    spec = data.draw(random_models(), label="model")
    context = data.draw(token_contexts(spec.config["vocab_size"],
                                       max_length=spec.config["context_length"]),
                        label="context")
    check(kata, (spec, context))
