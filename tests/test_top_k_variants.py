"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

EQUIVALENT = [
    "well_known_style.py",      # the transformers helper's top-k lines, on a clone
    "sort_and_where.py",
    "kthvalue_loop.py",
]

MISTAKES = {
    "scatter_indices.py": "keep exactly k tokens by position",
    "strictly_greater.py": "remove the k-th largest logit itself",
    "zero_fill.py": "set removed logits to 0 instead of -inf",
    "in_place.py": "changed its input `logits` in place",
    "no_clamp.py": "pass a k larger than the vocabulary to torch.topk",
    "no_keepdim.py": "drop the last dimension of the threshold",
    "no_raise.py": "k < 1 keeps no token at all",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("top-k", "--submission", SUBMISSIONS / "top_k" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("top-k", "--submission", SUBMISSIONS / "top_k" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
