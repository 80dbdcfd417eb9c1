"""Checks for problem 4, sample: one draw with a reproducible generator."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.cases import shipped_logits
from grader.grading.contract import Contract
from grader.grading.judges import expect_tensor
from grader.grading.skeleton import Call, GradeFailure
from grader.grading.strategies import logits


def generator_args(probs: torch.Tensor, seed: int) -> tuple:
    generator = torch.Generator().manual_seed(seed)
    return (probs, generator, generator.get_state())


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


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    probs, _, initial_state = call.args
    if isinstance(got, int) and not isinstance(got, bool):
        raise GradeFailure("sample() returned a plain int; return the (1, 1) LongTensor "
                           "that torch.multinomial(probs, 1, generator=generator) gives")
    after = call.record.after.get(1) if call.record.after else None
    untouched = after is not None and torch.equal(after.get_state(), initial_state)
    try:
        expect_tensor(got, expected, "the sampled token", exact=True)
    except GradeFailure as failure:
        hint = ""
        if isinstance(got, torch.Tensor) and got.numel() == 1 and int(
                got.flatten()[0]) == int(probs.argmax()):
            hint = ("\nThat is the most likely token: sample with torch.multinomial "
                    "instead of taking the argmax.")
        elif untouched and int(probs.max()) != 1:
            hint = ("\nThe generator passed in was never used: pass it to torch.multinomial "
                    "with generator=generator instead of using the global random state.")
        raise GradeFailure(failure.message + hint) from None
    if not untouched:
        raise GradeFailure("the generator was not put back to initial_state after the draw: "
                           "call generator.set_state(initial_state) after torch.multinomial")


CONTRACT = Contract(
    problem="sample", method="sample", arg_names=("probs", "generator", "initial_state"),
    cases=cases, judge=judge,
)

test_fixed_distributions, test_random_distributions = CONTRACT.tests(
    "A draw from a fixed distribution, and the generator restored",
    "Draws from random distributions and seeds, against the reference",
    draw_example)
