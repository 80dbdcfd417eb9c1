"""Checks for problem 10, top-p: keep the smallest set of likeliest tokens holding top_p."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import cases
from grader.grading.judges import diagnose_filter, expect_error, judge_top_p
from grader.grading.skeleton import GradeFailure, Kata, Mistake, outcome_of, raised
from grader.grading.strategies import GRADING, exact_nucleus_rows, logits
from grader.model import artifacts

PROBLEM = "top-p"
METHOD = "top_p_filter"
ARG_NAMES = ("logits", "top_p", "min_tokens_to_keep")
INF = float("-inf")


def nucleus(x: torch.Tensor, top_p: float, min_tokens_to_keep: int = 1, *,
            descending: bool = False, strict: bool = False, scatter: bool = True,
            fill: float = INF, dim: int = -1) -> torch.Tensor:
    """The reference rule with one knob per known mistake."""
    sorted_logits, sorted_indices = torch.sort(x, dim=-1, descending=descending)
    cumulative = sorted_logits.softmax(dim=dim).cumsum(dim=-1)
    remove = cumulative < 1 - top_p if strict else cumulative <= 1 - top_p
    remove[..., -min_tokens_to_keep:] = False
    if scatter:
        remove = remove.scatter(-1, sorted_indices, remove)
    return x.masked_fill(remove, fill)


def unshifted(x: torch.Tensor, top_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Descending, removing where the running total passes top_p, without the shift."""
    sorted_logits, sorted_indices = torch.sort(x, dim=-1, descending=True)
    remove = sorted_logits.softmax(dim=-1).cumsum(dim=-1) > top_p
    remove[..., :min_tokens_to_keep] = False
    return x.masked_fill(remove.scatter(-1, sorted_indices, remove), INF)


MISTAKES = [
    Mistake("keep a token whose more likely tokens already hold exactly top_p",
            "the boundary counts as reached: sorted ascending, remove where the cumulative "
            "probability is <= 1 - top_p (not <); sorted descending, remove where the "
            "tokens before it hold >= top_p (not >)",
            lambda x, p, m=1: nucleus(x, p, m, strict=True)),
    Mistake("sort descending but keep the rule written for an ascending sort",
            "sort ascending (least likely first), so the running total reaches each token "
            "after every less likely one: torch.sort(logits, descending=False)",
            lambda x, p, m=1: nucleus(x, p, m, descending=True)),
    Mistake("remove the token whose probability crosses top_p",
            "sorted descending, a token stays while the tokens before it hold less than "
            "top_p: shift the mask right by one, or sort ascending and remove where the "
            "running total is <= 1 - top_p",
            unshifted),
    Mistake("ignore min_tokens_to_keep",
            "after computing the mask, keep the min_tokens_to_keep most likely tokens: "
            "sorted_to_remove[..., -min_tokens_to_keep:] = False",
            lambda x, p, m=1: nucleus(x, p, 1)),
    Mistake("apply the mask in sorted order without putting it back in vocabulary order",
            "the mask is in sorted order: scatter it back with sorted_indices before using it",
            lambda x, p, m=1: nucleus(x, p, m, scatter=False)),
    Mistake("set removed logits to 0 instead of -inf",
            "a logit of 0 still has a probability; removed tokens need float('-inf')",
            lambda x, p, m=1: nucleus(x, p, m, fill=0.0)),
    Mistake("take the softmax over the batch dimension",
            "probabilities are per row: softmax(dim=-1)",
            lambda x, p, m=1: nucleus(x, p, m, dim=0)),
]


@torch.no_grad()
def shipped_logits(prompt: str) -> torch.Tensor:
    return artifacts.shipped_model()(cases.prompt_ids(prompt))[:, -1, :]


def fixed_cases() -> dict[str, tuple[tuple, bool]]:
    """Case id -> (arguments, whether the running totals are exact in float)."""
    after = shipped_logits("Once upon a time, there was a ")
    batch = torch.cat([after, shipped_logits("Tom"), shipped_logits("\n")])
    half_quarter_quarter = torch.tensor([[math.log(2), 0.0, 0.0]])
    return {
        "half": ((after, 0.5), False),
        "ninety-percent": ((after, 0.9), False),
        "top-p-zero": ((after, 0.0), False),
        "top-p-one": ((after, 1.0), False),
        "min-tokens-to-keep": ((after, 0.1, 3), False),
        "one-dimensional": ((after[0], 0.8), False),
        "batch-of-rows": ((batch, 0.7), False),
        "float64": ((after.double(), 0.6), False),
        "huge-logits": ((torch.tensor([[1e4, 1e4 - 1.0, 0.0, -1e4]]), 0.9), False),
        "all-but-one-minus-infinity": ((torch.tensor([[INF, 3.0, INF, INF]]), 0.3), False),
        "min-tokens-above-vocab-size": ((torch.tensor([[1.0, 2.0, 3.0]]), 0.2, 10), False),
        "half-quarter-quarter-at-0.5": ((half_quarter_quarter, 0.5), False),
        "half-quarter-quarter-at-0.75": ((half_quarter_quarter, 0.75), False),
        "exactly-half-of-four-ties": ((torch.zeros(4), 0.5), True),
        "exactly-three-quarters": ((torch.zeros(1, 4), 0.75), True),
        "exactly-a-quarter": ((torch.zeros(1, 4), 0.25), True),
        "exact-boundaries-in-a-batch": (
            (torch.tensor([[0.0, 0.0, 0.0, 0.0], [2.5, 2.5, INF, INF]]), 0.5), True),
        "exact-boundary-with-minus-infinity": (
            (torch.tensor([[0.0, INF, 0.0, 0.0, INF, 0.0, -1e4]]), 0.25), True),
        "exact-boundary-and-min-tokens": ((torch.zeros(1, 8), 0.25, 3), True),
    }


def fixed_args() -> dict[str, tuple]:
    return {case_id: args for case_id, (args, _) in fixed_cases().items()}


def check(kata: Kata, args: tuple, case_id: str | None = None, exact_sums: bool = False) -> None:
    got, live = kata.compare(METHOD, *args, arg_names=ARG_NAMES)
    expected = kata.expected(case_id, live) if case_id else live
    x, top_p, min_tokens_to_keep = (*args, 1) if len(args) == 2 else args
    try:
        if got[0] == "error":
            raise GradeFailure(raised(METHOD, got))
        judge_top_p(got[1], x, expected, top_p, min_tokens_to_keep, exact_sums=exact_sums)
    except GradeFailure as failure:
        raise GradeFailure(failure.message,
                           lambda: diagnose_filter(got, MISTAKES, *args)) from None


@pytest.mark.parametrize("case_id", list(fixed_cases()))
def test_fixed_logits(kata: Kata, case_id: str) -> None:
    """Top-p of fixed logits: exact boundaries, top_p = 0 and 1, -inf, batches"""
    args, exact_sums = fixed_cases()[case_id]
    check(kata, args, case_id, exact_sums)


@GRADING
@given(data=st.data())
def test_random_logits(kata: Kata, data: st.DataObject) -> None:
    """Top-p of random logits, with ties, huge values and -inf, against the reference"""
    x = data.draw(logits(), label="logits")
    if data.draw(st.booleans(), label="one row as a 1-D tensor"):
        x = x[0]
    top_p = data.draw(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 0.9, 1.0])),
                      label="top_p")
    min_tokens_to_keep = data.draw(st.one_of(st.just(1), st.integers(1, 5)),
                                   label="min_tokens_to_keep")
    check(kata, (x, top_p, min_tokens_to_keep))


@GRADING
@given(data=st.data())
def test_exact_boundaries(kata: Kata, data: st.DataObject) -> None:
    """Top-p where top_p lands exactly on a running total of probabilities"""
    x, top_p = data.draw(exact_nucleus_rows(), label="logits and top_p")
    min_tokens_to_keep = data.draw(st.integers(1, 3), label="min_tokens_to_keep")
    check(kata, (x, top_p, min_tokens_to_keep), exact_sums=True)


@pytest.mark.parametrize("top_p", [-0.1, 1.5, 2])
def test_refuses_top_p_outside_0_1(kata: Kata, top_p: float) -> None:
    """top_p outside [0, 1] raises ValueError"""
    args = (shipped_logits("Tom"), top_p)
    assert outcome_of(kata.reference.top_p_filter, *args)[0] == "error"
    expect_error(kata.outcome(METHOD, *args, arg_names=ARG_NAMES), "ValueError",
                 f"top_p_filter(logits, top_p={top_p})", METHOD)
