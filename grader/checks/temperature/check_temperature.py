"""Checks for problem 8, temperature: divide the logits, refuse temperature <= 0."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract, refusals_of
from grader.grading.judging.any_result import comparing, expect_tensor
from grader.grading.subject.cases import shipped_logits
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import logits
from grader.grading.values.failures import Mistake
from grader.locale import marked
from grader.wording import Plural


def multiply_by_the_temperature(x, t):
    return x * t


def return_probabilities_instead_of_logits(x, t):
    return torch.softmax(x / t, dim=-1)


def divide_the_probabilities_by_the_temperature(x, t):
    return torch.softmax(x, dim=-1) / t


MISTAKES = mistakes_of(globals())
NOT_RAISING = Mistake(
    "forget to raise for temperature <= 0",
    "check first: if temperature <= 0: raise ValueError(... use greedy decoding ...)",
    lambda x, t: x / t)


def cases() -> dict[str, tuple]:
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


def draw_example(data: st.DataObject) -> tuple:
    x = data.draw(logits(), label="logits")
    temperature = data.draw(st.one_of(st.floats(0.01, 20.0), st.sampled_from([1.0, 1e-4])),
                            label="temperature")
    flat = data.draw(st.booleans(), label="one row as a 1-D tensor")
    return (x[0] if flat else x, temperature)


# A float division rounded otherwise (in float64, or times 1/temperature) differs
# in the last bit or two: the default tolerance allows that.
CONTRACT = Contract(returns_new=True, cases=cases, mistakes=MISTAKES, refusals=refusals_of(
                        (0.0, 0, -1.0, -0.25, -1e-9), lambda t: (shipped_logits("Tom"), t),
                        "apply_temperature(logits, {!r})",
                        marked("raise ValueError when temperature <= 0 (a temperature of 0 "
                               "means greedy decoding)"), [NOT_RAISING]),
                    judge=comparing(expect_tensor, Plural(marked("the scaled logits")),
                                    same_dtype_as=marked("the logits")))

test_fixed_logits, test_random_logits = CONTRACT.tests(
    "Fixed logits divided by a temperature",
    "Random logits, with huge values and -inf, and random temperatures, against the reference",
    draw_example)


test_refuses_temperature_zero_or_less = CONTRACT.refusal_test(
    "A temperature <= 0 raises ValueError")
