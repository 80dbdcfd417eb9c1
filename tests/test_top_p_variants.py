"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

EQUIVALENT = [
    "well_known_style.py",      # transformers' TopPLogitsWarper, as a function
    "descending_exclusive.py",
    "descending_shifted_float64.py",
    "python_loop.py",
]

MISTAKES = {
    "strict_less.py": "keep a token whose more likely tokens already hold exactly top_p",
    "old_greater_than.py": "keep a token whose more likely tokens already hold exactly top_p",
    "descending_ascending_rule.py": "sort descending but keep the rule written for an ascending",
    "unshifted.py": "remove the token whose probability crosses top_p",
    "no_min_tokens.py": "ignore min_tokens_to_keep",
    "no_scatter.py": "apply the mask in sorted order",
    "in_place.py": "changed its input `logits` in place",
    "no_raise.py": "it should raise ValueError",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("top-p", "--submission", SUBMISSIONS / "top_p" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("top-p", "--submission", SUBMISSIONS / "top_p" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
