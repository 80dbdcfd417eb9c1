"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

FOLDER = SUBMISSIONS / "sampler"

EQUIVALENT = [
    "nanogpt_style.py",              # torch.manual_seed(seed) once, the global generator
    "float64_descending.py",         # float64, top-k by sort, top-p on a descending sort
    "inverse_temperature_lists.py",  # logits * (1 / temperature), a set of n-gram tuples
]

MISTAKES = {
    "reset_generator.py": "reset the generator at every step",
    "ignore_seed.py": "ignore the seed argument",
    "multiply_temperature.py": "multiply the logits by the temperature",
    "temperature_last.py": "apply the temperature after top-k and top-p",
    "top_p_first.py": "apply top-p before top-k",
    "ngram_window_only.py": "ban only the n-grams inside the model's window",
    "no_stop_when_all_banned.py": "keep going when every token is banned",
    "eos_zero_falsy.py": "test `if eos_id` (false for the id 0)",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("sampler", "--submission", FOLDER / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("sampler", "--submission", FOLDER / name)
    assert run.code == 1, run.messages() or run.stderr
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
