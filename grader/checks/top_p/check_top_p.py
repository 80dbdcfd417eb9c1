"""Checks for problem 10, top-p: keep the smallest set of likeliest tokens holding top_p."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract, refusals_of
from grader.grading.judging.filtered_logits import judge_top_p, same_filtering
from grader.grading.subject.cases import shipped_logits
from grader.grading.subject.filter_rules import nucleus_mask, sorted_totals
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import exact_nucleus_rows, logits_example
from grader.locale import marked

INF = float("-inf")


def nucleus(x: torch.Tensor, top_p: float, min_tokens_to_keep: int = 1, *,
            descending: bool = False, strict: bool = False, scatter: bool = True,
            fill: float = INF, dim: int = -1) -> torch.Tensor:
    """The rule with one knob per known mistake."""
    remove = nucleus_mask(x, top_p, min_tokens_to_keep, strict=strict, descending=descending,
                          scatter=scatter, dim=dim)
    return x.masked_fill(remove, fill)


def unshifted(x: torch.Tensor, top_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Descending, removing where the running total passes top_p, without the shift."""
    cumulative, sorted_indices = sorted_totals(x, descending=True)
    remove = cumulative > top_p
    remove[..., :min_tokens_to_keep] = False
    return x.masked_fill(remove.scatter(-1, sorted_indices, remove), INF)


def keep_the_token_at_exactly_top_p(x, p, m=1):
    return nucleus(x, p, m, strict=True)


def sort_descending_with_the_ascending_rule(x, p, m=1):
    return nucleus(x, p, m, descending=True)


def ignore_min_tokens_to_keep(x, p, m=1):
    return nucleus(x, p, 1)


def apply_the_mask_in_sorted_order(x, p, m=1):
    return nucleus(x, p, m, scatter=False)


def set_removed_logits_to_0_instead_of_inf(x, p, m=1):
    return nucleus(x, p, m, fill=0.0)


def take_the_softmax_over_the_batch_dimension(x, p, m=1):
    return nucleus(x, p, m, dim=0)


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    after = shipped_logits("Once upon a time, there was a ")
    batch = torch.cat([after, shipped_logits("Tom"), shipped_logits("\n")])
    half_quarter_quarter = torch.tensor([[math.log(2), 0.0, 0.0]])
    return {
        "half": (after, 0.5),
        "ninety-percent": (after, 0.9),
        "top-p-zero": (after, 0.0),
        "top-p-one": (after, 1.0),
        "min-tokens-to-keep": (after, 0.1, 3),
        "one-dimensional": (after[0], 0.8),
        "batch-of-rows": (batch, 0.7),
        "float64": (after.double(), 0.6),
        "huge-logits": (torch.tensor([[1e4, 1e4 - 1.0, 0.0, -1e4]]), 0.9),
        "all-but-one-minus-infinity": (torch.tensor([[INF, 3.0, INF, INF]]), 0.3),
        "min-tokens-above-vocab-size": (torch.tensor([[1.0, 2.0, 3.0]]), 0.2, 10),
        "half-quarter-quarter-at-0.5": (half_quarter_quarter, 0.5),
        "half-quarter-quarter-at-0.75": (half_quarter_quarter, 0.75),
        **exact_cases(),
    }


def exact_cases() -> dict[str, tuple]:
    """Cases whose probabilities and running totals are exact in float: their
    boundaries are judged exactly."""
    return {
        "exactly-half-of-four-ties": (torch.zeros(4), 0.5),
        "exactly-three-quarters": (torch.zeros(1, 4), 0.75),
        "exactly-a-quarter": (torch.zeros(1, 4), 0.25),
        "exact-boundaries-in-a-batch": (
            torch.tensor([[0.0, 0.0, 0.0, 0.0], [2.5, 2.5, INF, INF]]), 0.5),
        "exact-boundary-with-minus-infinity": (
            torch.tensor([[0.0, INF, 0.0, 0.0, INF, 0.0, -1e4]]), 0.25),
        "exact-boundary-and-min-tokens": (torch.zeros(1, 8), 0.25, 3),
    }


def judge(got: Any, expected: torch.Tensor, call: Call, exact_sums: bool = False) -> None:
    named = call.named
    judge_top_p(got, named["logits"], expected, named["top_p"], named["min_tokens_to_keep"],
                exact_sums=exact_sums or call.case_id in exact_cases())


def draw_example(data: st.DataObject) -> tuple:
    x = logits_example(data)
    top_p = data.draw(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 0.9, 1.0])),
                      label="top_p")
    min_tokens_to_keep = data.draw(st.one_of(st.just(1), st.integers(1, 5)),
                                   label="min_tokens_to_keep")
    return x, top_p, min_tokens_to_keep


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_filtering,
                    tell_apart_on_cases=True, returns_new=True,
                    refusals=refusals_of((-0.1, 1.5, 2), lambda p: (shipped_logits("Tom"), p),
                                         "top_p_filter(logits, top_p={})",
                                         marked("top_p is a probability, between 0 and 1")))

test_fixed_logits, test_random_logits = CONTRACT.tests(
    "Top-p of fixed logits: exact boundaries, top_p = 0 and 1, -inf, batches",
    "Top-p of random logits, with ties, huge values and -inf, against the reference",
    draw_example)


def draw_exact_example(data: st.DataObject) -> tuple:
    x, top_p = data.draw(exact_nucleus_rows(), label="logits and top_p")
    return x, top_p, data.draw(st.integers(1, 3), label="min_tokens_to_keep")


test_exact_boundaries = CONTRACT.example_test(
    "Top-p where top_p lands exactly on a running total of probabilities",
    draw_exact_example, judge=partial(judge, exact_sums=True))


test_refuses_top_p_outside_0_1 = CONTRACT.refusal_test("top_p outside [0, 1] raises ValueError")
