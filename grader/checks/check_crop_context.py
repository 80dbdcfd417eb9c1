"""Checks for problem 1, crop-context: keep the last context_length tokens."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.cases import context_length, corpus_prefix, prompt_ids
from grader.grading.contract import Contract
from grader.grading.failures import Mistake
from grader.grading.judges import comparing, expect_tensor
from grader.grading.kata import Kata
from grader.grading.strategies import token_contexts

MISTAKES = [
    Mistake("keep the oldest tokens instead of the newest",
            "the model continues the end of the text: keep its last context_length tokens",
            lambda c, n: c[:, :n]),
    Mistake("drop the batch dimension",
            "slice only the time dimension and keep the batch one: the result is (1, T')",
            lambda c, n: c[0, -n:]),
    Mistake("keep one token too few", "the window holds exactly context_length tokens",
            lambda c, n: c[:, -(n - 1):] if n > 1 else c[:, :0]),
    Mistake("keep one token too many", "the window holds exactly context_length tokens",
            lambda c, n: c[:, -(n + 1):]),
]


def cases() -> dict[str, tuple]:
    n = context_length()
    return {
        "shorter": (prompt_ids("Tom ran."), n),
        "one-token": (prompt_ids("T"), n),
        "exactly-context-length": (prompt_ids(corpus_prefix(n)), n),
        "one-longer": (prompt_ids(corpus_prefix(n + 1)), n),
        "much-longer": (prompt_ids(corpus_prefix(3 * n + 5)), n),
    }


def draw_example(data: st.DataObject) -> tuple:
    n = data.draw(st.integers(1, 20), label="context_length")
    return data.draw(token_contexts(50, max_length=3 * n), label="context"), n


CONTRACT = Contract(cases=cases, mistakes=MISTAKES,
                    judge=comparing(expect_tensor, "the cropped context", exact=True))

test_shipped_contexts, test_random_contexts = CONTRACT.tests(
    "The crop of a fixed context",
    "The crop of random contexts and context lengths, against the reference",
    draw_example)


def test_worked_example(kata: Kata) -> None:
    """A worked example: the last 3 of the tokens 0..4 are 2, 3, 4"""
    got = kata.run(CONTRACT.method, torch.arange(5).view(1, 5), 3, arg_names=CONTRACT.arg_names)
    expect_tensor(got, torch.tensor([[2, 3, 4]]), "crop_context(arange(5).view(1, 5), 3)",
                  exact=True)
