"""The top-k reference on hand-worked examples."""

from __future__ import annotations

import pytest
import torch
from conftest import reference_solution

INF = float("-inf")


def reference():
    return reference_solution("09-top-k")


TIES = torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0, 0.0, 2.0])


def test_keeps_every_tie_with_the_kth_largest() -> None:
    # the 2nd largest is 3.0 and three entries equal it
    assert torch.equal(reference().top_k_filter(TIES, 2),
                       torch.tensor([INF, 3.0, 3.0, INF, 3.0, INF, INF]))
    # the 4th largest is 2.0: the three 3.0s and both 2.0s stay
    assert torch.equal(reference().top_k_filter(TIES, 4),
                       torch.tensor([INF, 3.0, 3.0, 2.0, 3.0, INF, 2.0]))


def test_each_row_has_its_own_threshold() -> None:
    x = torch.tensor([[2.0, -1.0, 0.5], [0.0, 4.0, 4.0]])
    assert torch.equal(reference().top_k_filter(x, 1),
                       torch.tensor([[2.0, INF, INF], [INF, 4.0, 4.0]]))


def test_k_at_or_above_vocab_size_changes_nothing() -> None:
    x = torch.tensor([[0.25, -3.0, 7.5]])
    for k in (3, 4, 100):
        got = reference().top_k_filter(x, k)
        assert torch.equal(got, x) and got is not x


def test_fewer_finite_logits_than_k() -> None:
    x = torch.tensor([INF, INF, 0.5, INF])
    assert torch.equal(reference().top_k_filter(x, 2), x)


def test_input_is_kept() -> None:
    x = TIES.clone()
    reference().top_k_filter(x, 1)
    assert torch.equal(x, TIES)


@pytest.mark.parametrize("k", [0, -3])
def test_k_below_one_raises(k: int) -> None:
    with pytest.raises(ValueError):
        reference().top_k_filter(TIES, k)
