"""Checks for problem 1, crop-context: keep the last context_length tokens."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import comparing, expect_tensor
from grader.grading.subject.cases import context_length, corpus_prefix, prompt_ids
from grader.grading.subject.kata import Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import token_contexts
from grader.locale import marked


def keep_the_oldest_tokens_instead_of_the_newest(c, n):
    return c[:, :n]


def drop_the_batch_dimension(c, n):
    return c[0, -n:]


def keep_one_token_too_few(c, n):
    return c[:, -(n - 1):] if n > 1 else c[:, :0]


def keep_one_token_too_few_from_the_back(c, n):
    return c[:, -n + 1:]


def keep_one_token_too_many(c, n):
    return c[:, -(n + 1):]


def slice_the_batch_dimension_instead_of_the_tokens(c, n):
    return c[-n:]


def keep_the_shipped_models_window_whatever_context_length_is(c, n):
    return c[:, -context_length():]


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    n = context_length()
    return {
        "shorter": (prompt_ids("Tom ran."), n),
        "one-token": (prompt_ids("T"), n),
        "exactly-context-length": (prompt_ids(corpus_prefix(n)), n),
        # Before one-longer: there, slicing the batch dimension (which crops nothing)
        # and keeping one token too many give the same answer; here they differ, and
        # the mistake named first is the one tried first after.
        "much-longer": (prompt_ids(corpus_prefix(3 * n + 5)), n),
        "one-longer": (prompt_ids(corpus_prefix(n + 1)), n),
    }


def draw_example(data: st.DataObject) -> tuple:
    # The length is drawn first, up to three windows: a list's own length is mostly
    # short, and a context no longer than the window leaves nothing to crop (one
    # seed drew 20 contexts of which one needed cropping, and that one all zeros).
    n = data.draw(st.integers(1, 20), label="context_length")
    length = data.draw(st.integers(1, 3 * n), label="length")
    return data.draw(token_contexts(50, length, length), label="context"), n


CONTRACT = Contract(cases=cases, mistakes=MISTAKES,
                    judge=comparing(expect_tensor, marked("the cropped context"), exact=True))

test_shipped_contexts, test_random_contexts = CONTRACT.tests(
    "The crop of a fixed context",
    "The crop of random contexts and context lengths, against the reference",
    draw_example)


def test_worked_example(kata: Kata) -> None:
    """A worked example: the last 3 of the tokens 0..4 are 2, 3, 4"""
    got = kata.run(CONTRACT.method, torch.arange(5).view(1, 5), 3, arg_names=CONTRACT.arg_names)
    expect_tensor(got, torch.tensor([[2, 3, 4]]), "crop_context(arange(5).view(1, 5), 3)",
                  exact=True)
