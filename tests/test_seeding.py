"""torch.manual_seed in the grader's process while checks run
(grader/grading/engine/seeding.py): the CPU's draws of torch's own, without the cost."""

from __future__ import annotations

import traceback

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading.engine.seeding import cpu_seeding_only


def seeded_draws(seed: int) -> tuple[object, ...]:
    """What torch.manual_seed(seed) gives and the draws after it, or the error it raises."""
    try:
        generator = torch.manual_seed(seed)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return (type(exc),)
    return (generator is torch.default_generator, torch.rand(4).tolist(),
            torch.randint(0, 1000, (3,)).tolist())


@given(st.one_of(st.integers(-(2**63), 2**64 - 1), st.integers(2**64, 2**70),
                 st.integers(-(2**70), -(2**63) - 1)))
def test_the_seed_gives_the_draws_and_the_errors_torch_gives(seed: int) -> None:
    expected = seeded_draws(seed)
    with cpu_seeding_only():
        assert seeded_draws(seed) == expected


def test_no_stack_is_formatted_and_torch_is_itself_again_after(monkeypatch) -> None:
    def formatted(*args: object) -> list[str]:
        raise AssertionError("a stack was formatted")

    monkeypatch.setattr(traceback, "format_stack", formatted)
    original = torch.manual_seed
    with pytest.raises(KeyError), cpu_seeding_only():
        torch.manual_seed(0)
        raise KeyError("a check that fails")
    assert torch.manual_seed is original
