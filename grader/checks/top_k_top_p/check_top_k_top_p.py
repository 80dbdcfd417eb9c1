"""Checks for problem 11, top-k-top-p: the classic helper, top-k then top-p."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.filtered_logits import expect_filtered, judge_top_p, same_filtering
from grader.grading.subject import filter_rules as filters
from grader.grading.subject.cases import shipped_logits
from grader.grading.subject.filter_rules import nucleus_mask as top_p_mask
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import exact_nucleus_rows, logits_example
from grader.grading.values.failures import GradeFailure
from grader.locale import tr

INF = float("-inf")


def top_k_step(x: torch.Tensor, top_k: int, filter_value: float, keep: int) -> torch.Tensor:
    if top_k <= 0:
        return x.clone()
    return filters.top_k(x, max(top_k, keep), filter_value)


def helper(x: torch.Tensor, top_k: int = 0, top_p: float = 1.0, filter_value: float = INF,
           min_tokens_to_keep: int = 1, *, order: str = "k-then-p", k_keep: bool = True,
           p_keep: bool = True, fill: float | None = None, p_on_original: bool = False,
           strict: bool = False, fill_at_the_end: bool = False) -> torch.Tensor:
    """The reference helper with one knob per known mistake."""
    if fill_at_the_end:  # -inf throughout, filter_value put in for what was removed
        out = helper(x, top_k, top_p, INF, min_tokens_to_keep, order=order, k_keep=k_keep,
                     p_keep=p_keep, p_on_original=p_on_original, strict=strict)
        return out.masked_fill(torch.isneginf(out) & ~torch.isneginf(x), filter_value)
    fill = filter_value if fill is None else fill
    k_min = min_tokens_to_keep if k_keep else 1
    p_min = min_tokens_to_keep if p_keep else 1
    if order == "p-then-k":
        if top_p < 1.0:
            x = x.masked_fill(top_p_mask(x, top_p, p_min), fill)
        return top_k_step(x, top_k, fill, k_min)
    filtered = top_k_step(x, top_k, fill, k_min)
    if top_p < 1.0:
        filtered = filtered.masked_fill(top_p_mask(x if p_on_original else filtered, top_p,
                                                   p_min, strict=strict), fill)
    return filtered


MISTAKES = mistakes_of(globals(), helper)


def cases() -> dict[str, tuple]:
    after = shipped_logits("Once upon a time, there was a ")
    batch = torch.cat([after, shipped_logits("Tom"), shipped_logits("\n")])
    four = torch.tensor([[0.4, 0.3, 0.2, 0.1]]).log()
    return {
        "defaults-change-nothing": (after,),
        "top-k-only": (after, 5),
        "top-p-only": (after, 0, 0.9),
        "both": (after, 10, 0.8),
        "both-tight": (after, 3, 0.5),
        "top-p-sees-what-top-k-left": (four, 2, 0.5),
        "min-tokens-to-keep": (after, 2, 0.1, INF, 4),
        "finite-filter-value": (after, 5, 0.9, -1e4),
        # top-p sees top-k's filter_value as an ordinary logit: a 0 outweighs the kept
        # log-probabilities, so top-p then keeps the filled entries and not the others.
        "filter-value-top-p-sees": (four, 2, 0.5, 0.0),
        "batch-of-rows": (batch, 8, 0.7),
        "one-dimensional": (after[0], 6, 0.6),
        "ties-at-the-top-k-boundary": (torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 2.0]]),
                                       2, 0.9),
        "k-above-vocab-size": (after, 100, 0.9),
        "top-p-zero": (after, 5, 0.0),
        **exact_cases(),
    }


def exact_cases() -> dict[str, tuple]:
    """Cases whose probabilities and running totals are exact in float: their
    boundaries are judged exactly."""
    return {
        "exact-boundary-after-top-k": (torch.tensor([[0.0, -1.0, 0.0, -1.0, 0.0, 0.0]]), 4, 0.5),
        "exact-boundary-with-top-k-ties": (torch.zeros(1, 8), 4, 0.5),
    }


def expect_top_k_applied(got: object, x: torch.Tensor, after_top_k: torch.Tensor,
                         top_k: int, filter_value: float, min_tokens_to_keep: int) -> None:
    """No token that top-k removes may survive (top-k has exactly one right answer)."""
    if not (isinstance(got, torch.Tensor) and got.shape == x.shape and got.dtype == x.dtype):
        return  # the nucleus judge reports the shape or dtype
    survived = (x != filter_value) & (after_top_k == filter_value) & (got == x)
    if bool(survived.any()):
        index = tuple(survived.nonzero()[0].tolist())
        k = min(max(top_k, min_tokens_to_keep), x.shape[-1])
        raise GradeFailure(tr(
            "entry {index} is kept ({value}), but top-k removes it: with top_k={top_k} and "
            "min_tokens_to_keep={min_tokens_to_keep}, each row keeps only its {k} largest "
            "logits (and any tied with the last of them) before top-p runs",
            index=index, value=got[index].item(), top_k=top_k,
            min_tokens_to_keep=min_tokens_to_keep, k=k))


def judge(got: Any, expected: torch.Tensor, call: Call, exact_sums: bool = False) -> None:
    x, top_k, top_p, filter_value, min_tokens_to_keep = call.named.values()
    if top_p >= 1.0:
        expect_filtered(got, x, expected, filter_value=filter_value)
        return
    # Top-k has one right answer: check it on its own, then top-p on what it left.
    after_top_k = top_k_step(x, top_k, filter_value, min_tokens_to_keep)
    expect_top_k_applied(got, x, after_top_k, top_k, filter_value, min_tokens_to_keep)
    judge_top_p(got, after_top_k, expected, top_p, min_tokens_to_keep,
                filter_value=filter_value,
                exact_sums=exact_sums or call.case_id in exact_cases())


def draw_example(data: st.DataObject) -> tuple:
    x = logits_example(data)
    top_k = data.draw(st.integers(0, x.shape[-1] + 2), label="top_k")
    top_p = data.draw(st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.5, 1.0])),
                      label="top_p")
    filter_value = data.draw(st.sampled_from([INF, INF, -1e9]), label="filter_value")
    if not math.isinf(filter_value):
        # With a finite filter_value, an input -inf that is "removed" would turn into
        # filter_value; that corner is a matter of taste, so it is left out here.
        x = x.nan_to_num(neginf=-60.0)
    min_tokens_to_keep = data.draw(st.one_of(st.just(1), st.integers(1, 5)),
                                   label="min_tokens_to_keep")
    return x, top_k, top_p, filter_value, min_tokens_to_keep


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_filtering,
                    returns_new=True)

test_fixed_logits, test_random_logits = CONTRACT.tests(
    "Top-k then top-p of fixed logits: defaults, each alone, both, min_tokens_to_keep",
    "Top-k then top-p of random logits and settings, against the reference",
    draw_example)


def draw_exact_example(data: st.DataObject) -> tuple:
    x, top_p = data.draw(exact_nucleus_rows(), label="logits and top_p")
    top_k = data.draw(st.integers(0, x.shape[-1]), label="top_k")
    min_tokens_to_keep = data.draw(st.integers(1, 3), label="min_tokens_to_keep")
    return x, top_k, top_p, INF, min_tokens_to_keep


test_exact_boundaries = CONTRACT.example_test(
    "Top-k then top-p where top_p lands exactly on a running total of probabilities",
    draw_exact_example, judge=partial(judge, exact_sums=True))
