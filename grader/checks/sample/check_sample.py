"""Checks for problem 4, sample: one draw with a reproducible generator."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging import generator_draws
from grader.grading.judging.any_result import expect_tensor
from grader.grading.judging.generator_draws import ARGMAX, NOT_THE_GENERATOR, generator_args
from grader.grading.subject.cases import shipped_logits
from grader.grading.subject.kata import Call
from grader.grading.subject.strategies import logits
from grader.grading.values.failures import Diagnosis, GradeFailure
from grader.locale import tr


def shipped_probs(prompt: str) -> torch.Tensor:
    return torch.softmax(shipped_logits(prompt), dim=-1)


def cases() -> dict[str, tuple]:
    one_hot = torch.zeros(1, 40)
    one_hot[0, 7] = 1.0
    return {
        "after-a-prompt": generator_args(shipped_probs("Once upon a time, there was a"), 0),
        "word-boundary": generator_args(shipped_probs("The little fox saw the"), 0),
        "other-seed": generator_args(shipped_probs("Tom"), 1234),
        "uniform": generator_args(torch.full((1, 10), 0.1), 0),
        "certain": generator_args(one_hot, 0),
    }


def draw_example(data: st.DataObject) -> tuple:
    x = data.draw(logits(rows=1, max_vocab=30), label="logits")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    return generator_args(torch.softmax(x, dim=-1), seed)


# The mistakes how_drawn names, listed where the kata's catalogs and ids look for a
# check's mistakes.
NAMED_BY_DRAWING_AGAIN = (ARGMAX, NOT_THE_GENERATOR)


def how_drawn(call: Call) -> Diagnosis | str:
    """The diagnosis of a wrong draw, from sample() called again on a probe
    (generator_draws.py, which a learners' copy runs too)."""
    return generator_draws.how_drawn(call.again) if call.again is not None else ""


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    probs, _, initial_state = call.args
    if isinstance(got, int) and not isinstance(got, bool):
        raise GradeFailure(tr("sample() returned a plain int, not a (1, 1) LongTensor."),
                           hint=tr("return the tensor torch.multinomial gives, without .item()"))
    after = call.record.after.get(1) if call.record.after else None
    restored = after is not None and torch.equal(after.get_state(), initial_state)
    try:
        expect_tensor(got, expected, tr("the sampled token"), exact=True)
    except GradeFailure as failure:
        # The generator ends as it started both when it was used and restored and
        # when it was never used: only another call can tell which (how_drawn).
        raise GradeFailure(failure.message, lambda: how_drawn(call)) from None
    if not restored:
        raise GradeFailure(tr("the right token, but the generator was not put back to "
                              "initial_state after the draw, so the next draw will differ."),
                           hint=tr("call generator.set_state(initial_state) after "
                                   "torch.multinomial"))


CONTRACT = Contract(cases=cases, judge=judge)
# A learners' copy names a wrong draw as this check does, calling the learner's sample()
# again on the same probe (grader/release/build.py's AGAIN_DIAGNOSES).
PRACTICE_DIAGNOSIS = "generator-draws"

test_fixed_distributions, test_random_distributions = CONTRACT.tests(
    "A draw from a fixed distribution, and the generator restored",
    "Draws from random distributions and seeds, against the reference",
    draw_example)
