"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

EQUIVALENT = [
    "well_known_style.py",      # problem 06's loop with argmax in place of sampling
    "torch_max.py",
    "stable_sort_float64.py",
    "loop_over_list.py",
]

MISTAKES = {
    "sample.py": "sample a token (torch.multinomial)",
    "argmin.py": "take the least likely token (argmin)",
    "crop_first.py": "crop the wrong end of the context",
    "no_crop.py": "do not crop the context",
    "first_position.py": "use the first position's logits",
    "returns_prompt.py": "return the prompt as well",
    "topk_ties.py": "torch.topk and an unstable sort may return any of the tied ones",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("greedy", "--submission", SUBMISSIONS / "greedy" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("greedy", "--submission", SUBMISSIONS / "greedy" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
