"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

FOLDER = SUBMISSIONS / "no_repeat_ngram"

EQUIVALENT = [
    "dict_of_prefixes.py",    # a dict from each (n-1)-token prefix to the tokens after it
    "vectorised_unfold.py",   # unfold into n-grams, compare with the tail, torch.where
    "set_of_tuples.py",       # a set of n-gram tuples, one lookup per vocabulary entry
]

MISTAKES = {
    "last_n_tokens.py": "compare the last n tokens instead of the last n - 1",
    "negative_slice.py": "take the last n - 1 tokens with ids[-(n - 1):]",
    "latest_match.py": "ban only the token after the most recent match",
    "first_row_only.py": "use the first row's token ids for every row",
    "in_place.py": "changed its input `logits` in place",
    "large_negative.py": "use float('-inf')",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("no-repeat-ngram", "--submission", FOLDER / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("no-repeat-ngram", "--submission", FOLDER / name)
    assert run.code == 1, run.messages() or run.stderr
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
