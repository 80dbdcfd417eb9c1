"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

EQUIVALENT = [
    "well_known_style.py",      # the common answer to this exercise, verbatim in spirit
    "softmax_by_hand.py",
    "log_softmax_exp.py",
    "float64.py",
    "manual_seed_each_step.py",
    "own_generator.py",
    "no_grad.py",
]

MISTAKES = {
    "argmax.py": "take the most likely token (argmax)",
    "no_restore.py": "do not restore the generator",
    "crop_first.py": "crop the wrong end of the context",
    "no_crop.py": "do not crop the context",
    "last_position_missing.py": "use the first position's logits",
    "all_positions.py": "sample from all positions instead of the last",
    "returns_prompt.py": "return the prompt as well",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("generate", "--submission", SUBMISSIONS / "generate" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("generate", "--submission", SUBMISSIONS / "generate" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
