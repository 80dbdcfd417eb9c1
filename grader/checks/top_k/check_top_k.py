"""Checks for problem 9, top-k: keep the k largest logits of each row, and every tie."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract, refusals_of
from grader.grading.judging.filtered_logits import expect_filtered, same_filtering
from grader.grading.subject.cases import shipped_logits
from grader.grading.subject.filter_rules import kth_largest as kth
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import logits_example
from grader.locale import marked

INF = float("-inf")


def exactly_k(x: torch.Tensor, k: int) -> torch.Tensor:
    keep = torch.zeros_like(x, dtype=torch.bool)
    keep.scatter_(-1, torch.topk(x, min(k, x.shape[-1]), dim=-1).indices, True)
    return x.masked_fill(~keep, INF)


def remove_the_k_th_largest_logit_itself(x, k):
    return x.masked_fill(x <= kth(x, k), INF)


def set_removed_logits_to_0_instead_of_inf(x, k):
    return x.masked_fill(x < kth(x, k), 0.0)


def keep_the_k_smallest(x, k):
    smallest = torch.topk(x, min(k, x.shape[-1]), dim=-1, largest=False).values
    return x.masked_fill(x > smallest[..., -1:], INF)


def keep_one_token_too_many(x, k):
    return x.masked_fill(x < torch.sort(x, dim=-1, descending=True).values[..., k, None], INF)


def drop_the_last_dimension_of_the_threshold(x, k):
    return x.masked_fill(x < torch.topk(x, min(k, x.shape[-1]), dim=-1).values[..., -1], INF)


def pass_topk_a_k_over_the_vocabulary(x, k):
    return x.masked_fill(x < torch.topk(x, k, dim=-1).values[..., -1:], INF)


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    after = shipped_logits("Once upon a time, there was a ")
    ties = torch.tensor([[1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 2.0]])
    return {
        "five-of-forty": (after, 5),
        "k-is-one": (after, 1),
        "k-is-vocab-size": (after, 40),
        "k-above-vocab-size": (after, 100),
        "one-dimensional": (after[0], 3),
        "batch-of-rows": (torch.cat([after, shipped_logits("Tom"), shipped_logits("\n")]), 4),
        "ties-at-the-boundary": (ties, 2),
        "ties-below-the-boundary": (ties, 4),
        "all-tied": (torch.zeros(6), 1),
        "all-but-one-minus-infinity": (torch.tensor([[INF, INF, 0.5, INF]]), 2),
        "minus-infinity-and-ties": (torch.tensor([[0.0, INF, 0.0, -1.0], [5.0, 5.0, INF, 5.0]]), 1),
        "float64": (after.double(), 7),
    }


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    expect_filtered(got, call.named["logits"], expected)


def draw_example(data: st.DataObject) -> tuple:
    x = logits_example(data)
    return x, data.draw(st.integers(1, x.shape[-1] + 2), label="k")


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_filtering,
                    returns_new=True,
                    refusals=refusals_of((0, -1), lambda k: (shipped_logits("Tom"), k),
                                         "top_k_filter(logits, k={})",
                                         marked("k < 1 keeps no token at all, which cannot "
                                                "be sampled from")))

test_fixed_logits, test_random_logits = CONTRACT.tests(
    "Top-k of fixed logits: ties, -inf, k = 1, k >= vocab_size, batches",
    "Top-k of random logits, with ties, huge values and -inf, against the reference",
    draw_example)


test_refuses_k_below_one = CONTRACT.refusal_test("k < 1 raises ValueError")
