"""`gpt-kata hint` after a grade that named no mistake: no older mistake's fix.

A learner fixes one mistake (ReLU for GELU, say) and makes another that the
grader does not name; the fix offered must not be the old one's.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from grader import paths
from grader.grading.values.failures import NamedMistake
from grader.learner import status
from grader.registry import find


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(paths, "STATE", tmp_path / ".gpt-kata")
    return tmp_path


def graded(submission: Path, *results: SimpleNamespace) -> SimpleNamespace:
    summary = SimpleNamespace(problem=find("transformer-block"), submission=submission,
                              status="fail", untouched=False, results=list(results))
    return SimpleNamespace(summaries=[summary])


def failed(hint: str = "", message: str = "the block's output differs") -> SimpleNamespace:
    # The report names the mistake as data; the message says it in words.
    mistake = (NamedMistake("transformer-block/use-relu-instead-of-gelu",
                            "use ReLU instead of GELU", hint) if hint else None)
    return SimpleNamespace(status="fail", hint=hint, message=message, name="test_blocks",
                           mistake=mistake)


def graded_with_relu(state: Path) -> Path:
    """A grade of a block using ReLU, which names the mistake; the file graded."""
    file = state / "solution.py"
    file.write_text("relu\n")
    status.record(graded(file, failed(
        "the MLP's activation is F.gelu",
        "This is what happens when you use ReLU instead of GELU.")))
    return file


def test_a_grade_that_names_no_mistake_forgets_the_older_fix(state: Path) -> None:
    file = graded_with_relu(state)
    assert status.load_status()["transformer-block"]["mistake_hint"] == (
        "the MLP's activation is F.gelu")
    file.write_text("a mistake no check names\n")
    status.record(graded(file, failed()))
    what, text = status.next_hint(find("transformer-block"))
    assert "GELU" not in text and "gelu" not in text
    assert what.startswith("hint 1 of")


def test_a_named_mistake_still_offers_its_fix_first(state: Path) -> None:
    graded_with_relu(state)
    what, text = status.next_hint(find("transformer-block"))
    assert what == "the fix for the mistake your last grade named"
    assert text == ("This is what happens when you use ReLU instead of GELU.\n"
                    "Fix: the MLP's activation is F.gelu")
