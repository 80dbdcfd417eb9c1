"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

EQUIVALENT = [
    "well_known_style.py",
    "torch_div.py",
    "times_inverse.py",         # rounds differently in the last bit: within tolerance
    "float64_round_trip.py",
    "clone_then_in_place.py",
]

MISTAKES = {
    "multiply.py": "multiply the logits by the temperature",
    "no_raise.py": "forget to raise for temperature <= 0",
    "raise_only_negative.py": "forget to raise for temperature <= 0",
    "probabilities.py": "return probabilities instead of logits",
    "in_place.py": "changed its input `logits` in place",
    "assert_instead.py": "should raise ValueError; instead apply_temperature() raised Assert",
    "message_without_greedy.py": "the message should mention 'greedy'",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("temperature", "--submission", SUBMISSIONS / "temperature" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("temperature", "--submission", SUBMISSIONS / "temperature" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
