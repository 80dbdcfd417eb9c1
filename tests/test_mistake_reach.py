"""`python -m grader.maintainer.mistake_reach`: which known mistakes a check's drawn
examples never show, so that a contributor sees where a drawn test falls short."""

from __future__ import annotations

import pytest
import torch

from grader.maintainer import mistake_reach

CROP_MISTAKES = {"keep the oldest tokens instead of the newest", "keep one token too few",
                 "keep one token too many", "slice the batch dimension instead of the tokens",
                 "keep the shipped model's window (48 tokens) whatever context_length is"}


def test_crop_contexts_drawn_examples_show_every_known_mistake() -> None:
    # Its draw once kept contexts so short that keeping the oldest tokens passed it.
    count, missed = mistake_reach.never_caught("crop-context")
    assert count == 20 and missed == []


def test_a_mistake_no_drawn_example_shows_is_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: drawn contexts that fit their window leave nothing to crop."""
    monkeypatch.setattr(mistake_reach, "drawn",
                        lambda identity, draw: [(torch.tensor([[1, 2]]), 3)])
    count, missed = mistake_reach.never_caught("crop-context")
    assert count == 1 and set(missed) == CROP_MISTAKES  # not the dropped batch dimension


def test_the_command_lists_each_problem(capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from grader.grading.subject.examples_seed import SEED_VARIABLE

    monkeypatch.setenv(SEED_VARIABLE, "")  # the command sets it: put back afterwards
    assert mistake_reach.main(["crop-context", "gpt"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "crop-context: 20 drawn examples; never caught: none",
        "gpt: passed over (a module problem, or driven by a harness)"]
