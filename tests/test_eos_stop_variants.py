"""Submissions in other styles: equivalent ones pass, known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import SUBMISSIONS

FOLDER = SUBMISSIONS / "eos_stop"

EQUIVALENT = [
    "well_known_style.py",        # problem 06's common answer, plus the two stops
    "cut_afterwards.py",          # stop at the end token, then cut at the first stop string
    "global_seed_each_step.py",   # torch.manual_seed(0) before each draw, softmax by hand
]

MISTAKES = {
    "keeps_eos.py": "keep the end-of-sequence character in the text",
    "ignores_eos.py": "do not stop at the end-of-sequence token",
    "keeps_stop.py": "keep the stop string at the end of the text",
    "ignores_stop.py": "ignore the stop strings",
    "stop_on_prompt.py": "check the stop strings against the prompt as well",
    "one_too_many.py": "generate one token more than max_new_tokens",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("eos-stop", "--submission", FOLDER / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("eos-stop", "--submission", FOLDER / name)
    assert run.code == 1, run.messages() or run.stderr
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()
