"""Checks for problem 8, temperature: divide the logits, refuse temperature <= 0."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import cases
from grader.grading.judges import expect_error, expect_tensor
from grader.grading.skeleton import GradeFailure, Kata, Mistake, outcome_of, raised
from grader.grading.strategies import GRADING, logits
from grader.model import artifacts

PROBLEM = "temperature"
METHOD = "apply_temperature"
ARG_NAMES = ("logits", "temperature")


def not_raising(x: torch.Tensor, t: float) -> torch.Tensor:
    return x / t


MISTAKES = [
    Mistake("multiply the logits by the temperature instead of dividing",
            "a temperature below 1 must sharpen the distribution: return logits / temperature",
            lambda x, t: x * t),
    Mistake("return probabilities instead of logits",
            "only scale the logits; the softmax comes later: return logits / temperature",
            lambda x, t: torch.softmax(x / t, dim=-1)),
    Mistake("forget to raise for temperature <= 0",
            "check first: if temperature <= 0: raise ValueError(... use greedy decoding ...)",
            not_raising),
]


@torch.no_grad()
def shipped_logits(prompt: str) -> torch.Tensor:
    return artifacts.shipped_model()(cases.prompt_ids(prompt))[:, -1, :]


def fixed_args() -> dict[str, tuple]:
    after = shipped_logits("Once upon a time, there was a ")
    return {
        "sharpen": (after, 0.5),
        "one-changes-nothing": (after, 1.0),
        "flatten": (after, 2.0),
        "int-temperature": (after, 3),
        "tiny-temperature": (after, 1e-3),
        "one-dimensional": (after[0], 0.7),
        "minus-infinity": (torch.tensor([[2.0, float("-inf"), -1.0, 0.5]]), 0.25),
        "batch-of-rows": (torch.cat([after, shipped_logits("Tom")]), 1.5),
        "float64": (after.double(), 0.8),
    }


def check(kata: Kata, args: tuple, case_id: str | None = None) -> None:
    got, live = kata.compare(METHOD, *args, arg_names=ARG_NAMES)
    expected = kata.expected(case_id, live) if case_id else live
    try:
        if got[0] == "error":
            raise GradeFailure(raised(METHOD, got))
        # A float division rounded otherwise (in float64, or times 1/temperature)
        # differs in the last bit or two: the default tolerance allows that.
        expect_tensor(got[1], expected, "the scaled logits")
        if got[1].dtype != expected.dtype:
            raise GradeFailure(f"the scaled logits are {got[1].dtype}, but the logits were "
                               f"{expected.dtype}: keep the input's dtype")
    except GradeFailure as failure:
        raise GradeFailure(failure.message,
                           lambda: kata.diagnose(got, MISTAKES, *args)) from None


@pytest.mark.parametrize("case_id", list(fixed_args()))
def test_fixed_logits(kata: Kata, case_id: str) -> None:
    """Fixed logits divided by a temperature"""
    check(kata, fixed_args()[case_id], case_id)


@GRADING
@given(x=logits(), temperature=st.one_of(st.floats(0.01, 20.0), st.sampled_from([1.0, 1e-4])),
       flat=st.booleans())
def test_random_logits(kata: Kata, x: torch.Tensor, temperature: float, flat: bool) -> None:
    """Random logits, with huge values and -inf, and random temperatures, against the reference"""
    check(kata, (x[0] if flat else x, temperature))


@pytest.mark.parametrize("temperature", [0.0, 0, -1.0, -0.25, -1e-9])
def test_refuses_temperature_zero_or_less(kata: Kata, temperature: float) -> None:
    """A temperature <= 0 raises ValueError that points to greedy decoding"""
    x = shipped_logits("Tom")
    assert outcome_of(kata.reference.apply_temperature, x, temperature)[0] == "error"
    what = f"apply_temperature(logits, {temperature!r})"
    got = kata.outcome(METHOD, x, temperature, arg_names=ARG_NAMES)
    if got[0] == "value":
        raise GradeFailure(f"{what} returned a value instead of raising ValueError"
                           + (kata.diagnose(got, MISTAKES, x, temperature)
                              or ": raise ValueError when temperature <= 0"))
    expect_error(got, "ValueError", what, METHOD, mentions="greedy")
