"""The practice grade's account of a wrong answer says what the learner can act on."""

from __future__ import annotations

import numpy as np
import torch

from grader.release.practice.judge import describe, difference


def test_a_number_returned_for_a_tensor_is_said_to_be_no_tensor() -> None:
    """loss.item() for the loss prints as the expected number: the message must say that
    the kind is what is wrong, or it reads as "got x, expected x"."""
    got, want = 0.4796505272388458, torch.tensor(0.4796505272388458)
    assert describe(got) in describe(want)  # the two values alone look the same
    assert difference(got, want) == "; it is a float, not a tensor"
    assert "; it is an ndarray, not a tensor" in difference(np.array([1, 2]),
                                                           torch.tensor([1, 2]))
    assert difference(3, torch.tensor(3)) == "; it is an int, not a tensor"


def test_a_tensor_for_a_tensor_is_still_compared_entry_by_entry() -> None:
    assert difference(torch.tensor([1, 2]), torch.tensor([1, 2])) == ""
    assert "entry (1,) is 3, expected 2" in difference(torch.tensor([1, 3]),
                                                        torch.tensor([1, 2]))
    assert difference([1, 2], [1, 2]) == ""  # a list where a list is expected: as before
