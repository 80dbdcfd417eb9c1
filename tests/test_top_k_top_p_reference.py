"""The top-k-top-p reference on hand-worked examples."""

from __future__ import annotations

import torch
from conftest import reference_solution

INF = float("-inf")
FOUR = torch.tensor([0.4, 0.3, 0.2, 0.1]).log()


def reference():
    return reference_solution("11-top-k-top-p")


def test_defaults_return_an_unchanged_copy() -> None:
    got = reference().top_k_top_p_filtering(FOUR)
    assert torch.equal(got, FOUR) and got is not FOUR


def test_top_p_sees_what_top_k_left() -> None:
    # top-k keeps 0.4 and 0.3, which become 4/7 and 3/7: 4/7 alone reaches 0.5
    got = reference().top_k_top_p_filtering(FOUR, top_k=2, top_p=0.5)
    assert torch.equal(got, torch.tensor([FOUR[0].item(), INF, INF, INF]))
    # on all four tokens 0.4 alone would not reach 0.5: top-p alone keeps two
    got = reference().top_k_top_p_filtering(FOUR, top_k=0, top_p=0.5)
    assert torch.equal(got, torch.tensor([FOUR[0].item(), FOUR[1].item(), INF, INF]))


def test_filter_value() -> None:
    got = reference().top_k_top_p_filtering(FOUR, top_k=3, filter_value=-1e4)
    assert torch.equal(got, torch.tensor([*FOUR[:3].tolist(), -1e4]))


def test_min_tokens_to_keep_applies_to_both_steps() -> None:
    got = reference().top_k_top_p_filtering(FOUR, top_k=1, top_p=0.1, min_tokens_to_keep=3)
    assert torch.equal(got, torch.tensor([*FOUR[:3].tolist(), INF]))


def test_ties_at_the_top_k_boundary_stay() -> None:
    x = torch.tensor([[0.0, 1.0, 1.0, 1.0]])
    got = reference().top_k_top_p_filtering(x, top_k=1)
    assert torch.equal(got, torch.tensor([[INF, 1.0, 1.0, 1.0]]))


def test_input_is_kept() -> None:
    x = FOUR.clone()
    reference().top_k_top_p_filtering(x, top_k=1, top_p=0.5)
    assert torch.equal(x, FOUR)
