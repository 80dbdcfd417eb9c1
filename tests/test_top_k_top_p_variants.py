"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

EQUIVALENT = [
    "well_known_style.py",      # the transformers helper, on a clone
    "composed.py",
    "row_loop.py",
]

MISTAKES = {
    "p_then_k.py": "run top-p on the logits before top-k filtered them",
    "p_on_original.py": "run top-p on the logits before top-k filtered them",
    "k_ignores_min_tokens.py": "let top-k keep fewer than min_tokens_to_keep tokens",
    "minus_inf.py": "set removed logits to -inf instead of filter_value",
    "old_greater_than.py": "keep a token whose more likely tokens already hold exactly top_p",
    "in_place.py": "changed its input `logits` in place",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("top-k-top-p", "--submission", SUBMISSIONS / "top_k_top_p" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("top-k-top-p", "--submission", SUBMISSIONS / "top_k_top_p" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
