"""The temperature reference on hand-worked examples."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import reference_solution


def reference():
    return reference_solution("08-temperature")


def test_divides_by_the_temperature() -> None:
    got = reference().apply_temperature(torch.tensor([2.0, 1.0, float("-inf")]), 0.5)
    assert torch.equal(got, torch.tensor([4.0, 2.0, float("-inf")]))


def test_temperature_two_halves_the_log_odds() -> None:
    # odds 4 : 1 become 2 : 1 at temperature 2, so the probabilities are 2/3 and 1/3
    got = reference().apply_temperature(torch.tensor([[math.log(4.0), 0.0]]), 2.0)
    assert torch.allclose(torch.softmax(got, dim=-1), torch.tensor([[2 / 3, 1 / 3]]))


def test_one_changes_nothing_and_input_is_kept() -> None:
    x = torch.tensor([[0.5, -1.25], [3.0, 0.0]], dtype=torch.float64)
    before = x.clone()
    got = reference().apply_temperature(x, 1)
    assert torch.equal(got, before) and got.dtype == torch.float64
    assert torch.equal(x, before)


@pytest.mark.parametrize("temperature", [0, 0.0, -1.0])
def test_zero_or_less_points_to_greedy(temperature: float) -> None:
    with pytest.raises(ValueError, match="(?i)greedy"):
        reference().apply_temperature(torch.tensor([1.0, 2.0]), temperature)
