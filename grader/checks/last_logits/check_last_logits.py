"""Checks for problem 2, last-logits: one forward pass, keep the last position."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import comparing, expect_tensor
from grader.grading.subject.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import model_and_context
from grader.locale import marked
from grader.wording import Plural


def keep_the_last_position_as_a_dimension_of_one(m, c):
    return m(c)[:, -1:, :]


def return_the_logits_of_every_position(m, c):
    return m(c)


def feed_only_the_last_token(m, c):
    return m(c[:, -1:])[:, -1, :]


def take_the_first_position_instead_of_the_last(m, c):
    return m(c)[:, 0, :]


def drop_the_batch_dimension(m, c):
    return m(c)[0, -1, :]


def apply_softmax(m, c):
    return torch.softmax(m(c)[:, -1, :], dim=-1)


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    return {
        "one-token": (SHIPPED, prompt_ids("\n")),
        "a-sentence": (SHIPPED, prompt_ids("Once upon a time, there was a")),
        "full-window": (SHIPPED, prompt_ids(corpus_prefix(context_length()))),
    }


def draw_example(data: st.DataObject) -> tuple:
    return model_and_context(data, windows=1)


CONTRACT = Contract(cases=cases, mistakes=MISTAKES,
                    judge=comparing(expect_tensor, Plural(marked("the last position's logits"))))

test_shipped_model, test_random_models = CONTRACT.tests(
    "The last logits of the shipped model for a fixed prompt",
    "The last logits of small random models, against the reference",
    draw_example)
