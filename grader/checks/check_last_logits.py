"""Checks for problem 2, last-logits: one forward pass, keep the last position."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
from grader.grading.contract import Contract
from grader.grading.failures import Mistake
from grader.grading.judges import comparing, expect_tensor
from grader.grading.strategies import model_and_context
from grader.wording import Plural

MISTAKES = [
    Mistake("return the logits of every position",
            "the next token is predicted at the last position only: logits[:, -1, :]",
            lambda m, c: m(c)),
    Mistake("feed the model only the last token, so it predicts from that token alone",
            "give the model the whole context, model(context), and keep its last position: "
            "logits[:, -1, :]",
            lambda m, c: m(c[:, -1:])[:, -1, :]),
    Mistake("take the first position instead of the last",
            "position -1 predicts what comes after the whole context: logits[:, -1, :]",
            lambda m, c: m(c)[:, 0, :]),
    Mistake("drop the batch dimension", "keep shape (1, vocab_size): logits[:, -1, :]",
            lambda m, c: m(c)[0, -1, :]),
    Mistake("apply softmax", "return raw logits; softmax is the next problem",
            lambda m, c: torch.softmax(m(c)[:, -1, :], dim=-1)),
]


def cases() -> dict[str, tuple]:
    return {
        "one-token": (SHIPPED, prompt_ids("\n")),
        "a-sentence": (SHIPPED, prompt_ids("Once upon a time, there was a")),
        "full-window": (SHIPPED, prompt_ids(corpus_prefix(context_length()))),
    }


def draw_example(data: st.DataObject) -> tuple:
    return model_and_context(data, windows=1)


CONTRACT = Contract(cases=cases, mistakes=MISTAKES,
                    judge=comparing(expect_tensor, Plural("the last position's logits")))

test_shipped_model, test_random_models = CONTRACT.tests(
    "The last logits of the shipped model for a fixed prompt",
    "The last logits of small random models, against the reference",
    draw_example)
