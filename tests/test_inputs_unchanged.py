"""An input the learner's call changed in place fails, in the full grade and in the
learners' copy alike, whatever its values: infinities and nan included."""

from __future__ import annotations

import pytest
import torch

from grader.grading.values.equality import unchanged
from grader.release.practice.judge import changed_inputs

LOGITS = torch.tensor([[1.5, float("-inf"), 0.25, float("inf"), float("nan")]])
LOWEST, HIGHEST = torch.finfo(torch.float32).min, torch.finfo(torch.float32).max


def overwritten(index: int, value: float) -> torch.Tensor:
    changed = LOGITS.clone()
    changed[0, index] = value
    return changed


@pytest.mark.parametrize("after", [
    overwritten(1, LOWEST),  # -inf clamped to the lowest float, as clamp_(min=...) does
    overwritten(3, HIGHEST),
    overwritten(4, 0.0),  # nan made 0
    overwritten(0, float("nan")),
    overwritten(2, -0.25),
], ids=["-inf-to-lowest", "inf-to-highest", "nan-to-zero", "number-to-nan", "sign"])
def test_a_changed_tensor_is_changed_to_both_judges(after: torch.Tensor) -> None:
    assert not unchanged(LOGITS, after)
    assert changed_inputs((after,), (LOGITS,), ("logits",)) == "logits"


def test_a_tensor_left_as_it_was_is_unchanged_to_both_judges() -> None:
    after = LOGITS.clone()  # nan where it had nan: the same values bit for bit
    assert unchanged(LOGITS, after)
    assert changed_inputs((after,), (LOGITS,), ("logits",)) == ""
    ids = torch.tensor([3, 1, 4])
    assert unchanged(ids, ids.clone()) and changed_inputs((ids.clone(),), (ids,), ("ids",)) == ""
    assert not unchanged(ids, torch.tensor([3, 1, 5]))
