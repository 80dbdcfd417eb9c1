"""The top-p reference, and the judge that allows ties and rounding, on hand-worked examples."""

from __future__ import annotations

import pytest
import torch
from conftest import reference_solution

from grader.grading.judging.filtered_logits import judge_top_p
from grader.grading.values.failures import GradeFailure

INF = float("-inf")


def reference():
    return reference_solution("10-top-p")


def kept(t: torch.Tensor) -> int:
    return int((t != INF).sum())


def test_smallest_set_reaching_top_p() -> None:
    # probabilities 0.1, 0.2, 0.7: 0.7 alone is short of 0.8, 0.7 + 0.2 reaches it
    x = torch.tensor([0.1, 0.2, 0.7]).log()
    got = reference().top_p_filter(x, 0.8)
    assert torch.equal(got, torch.tensor([INF, x[1].item(), x[2].item()]))


def test_a_boundary_exactly_on_a_running_total_is_reached() -> None:
    # four equal logits: probabilities 1/4; two of them hold exactly 1/2
    assert kept(reference().top_p_filter(torch.zeros(4), 0.5)) == 2
    assert kept(reference().top_p_filter(torch.zeros(4), 0.75)) == 3
    assert kept(reference().top_p_filter(torch.zeros(4), 0.25)) == 1


def test_zero_and_one() -> None:
    x = torch.tensor([[1.0, 2.0, 0.0]])
    assert torch.equal(reference().top_p_filter(x, 0.0), torch.tensor([[INF, 2.0, INF]]))
    assert torch.equal(reference().top_p_filter(x, 1.0), x)


def test_min_tokens_to_keep() -> None:
    got = reference().top_p_filter(torch.tensor([3.0, 1.0, 2.0]), 0.0, 2)
    assert torch.equal(got, torch.tensor([3.0, INF, 2.0]))
    assert kept(reference().top_p_filter(torch.zeros(3), 0.0, 10)) == 3


def test_rows_on_their_own() -> None:
    x = torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, INF, INF]])
    got = reference().top_p_filter(x, 0.5)
    assert [kept(row) for row in got] == [2, 1]


@pytest.mark.parametrize("top_p", [-0.5, 1.01])
def test_top_p_outside_0_1_raises(top_p: float) -> None:
    with pytest.raises(ValueError):
        reference().top_p_filter(torch.zeros(3), top_p)


def test_judge_allows_another_choice_among_ties() -> None:
    x = torch.zeros(4)
    expected = torch.tensor([INF, INF, 0.0, 0.0])
    judge_top_p(torch.tensor([0.0, INF, INF, 0.0]), x, expected, 0.5, 1, exact_sums=True)


def test_judge_is_exact_on_exact_totals() -> None:
    x, expected = torch.zeros(4), torch.tensor([INF, INF, 0.0, 0.0])
    with pytest.raises(GradeFailure, match="3 tokens kept"):
        judge_top_p(torch.tensor([INF, 0.0, 0.0, 0.0]), x, expected, 0.5, 1, exact_sums=True)


def test_judge_allows_either_side_of_a_rounded_boundary() -> None:
    # 0.5, 0.25, 0.25 in float32; in exact arithmetic log(2) is not a float, so
    # the first token holds 0.5 only to within rounding: 1 or 2 tokens are fair
    x = torch.tensor([0.6931472, 0.0, 0.0])
    expected = torch.tensor([0.6931472, INF, INF])
    judge_top_p(torch.tensor([0.6931472, 0.0, INF]), x, expected, 0.5, 1)
    with pytest.raises(GradeFailure):
        judge_top_p(x.clone(), x, expected, 0.5, 1)


def test_judge_rejects_a_changed_or_zeroed_logit() -> None:
    x = torch.tensor([1.0, 2.0, 3.0])
    expected = torch.tensor([INF, 2.0, 3.0])
    with pytest.raises(GradeFailure, match="unchanged bit for bit"):
        judge_top_p(torch.tensor([0.0, 2.0, 3.0]), x, expected, 0.7, 1)
    with pytest.raises(GradeFailure, match="unchanged bit for bit"):
        judge_top_p(torch.tensor([INF, 2.0, 3.0000002]), x, expected, 0.7, 1)
