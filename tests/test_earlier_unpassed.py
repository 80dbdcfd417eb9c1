"""A failing problem whose file takes an earlier solution with solution_of(...) that has
not passed says so under the grade: 35's Llama fails wherever 34's attention does, with
no mistake of 35's to name."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from grader import paths
from grader.learner import status
from grader.registry import find


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A learner's problems/ with 34's attention and 35's Llama, which takes it."""
    monkeypatch.setattr(paths, "STATE", tmp_path / ".gpt-kata")
    problems = tmp_path / "problems"
    for slug, text in (("grouped-query-attention", "class GroupedQueryAttention: ...\n"),
                       ("modern-gpt", "from grader.reuse import solution_of\n"
                                      "GroupedQueryAttention = solution_of("
                                      "'grouped-query-attention', "
                                      "name='GroupedQueryAttention')\n")):
        (problems / find(slug).folder).mkdir(parents=True)
        (problems / find(slug).folder / "solution.py").write_text(text)
    return problems


def graded(problems: Path, slug: str, result: str) -> SimpleNamespace:
    summary = SimpleNamespace(problem=find(slug), status=result, untouched=False, results=[],
                              submission=problems / find(slug).folder / "solution.py")
    return SimpleNamespace(summaries=[summary])


def test_a_failing_llama_names_the_attention_it_takes_until_that_passes(folder: Path) -> None:
    llama = graded(folder, "modern-gpt", "fail")
    status.record(graded(folder, "grouped-query-attention", "fail"))
    [line] = status.earlier_unpassed(llama)
    assert "35-modern-gpt" in line and "34-grouped-query-attention" in line
    assert "`gpt-kata grade 34`" in line
    status.record(graded(folder, "grouped-query-attention", "pass"))
    assert status.earlier_unpassed(llama) == []
    # Changed since it passed: not passed as it is now.
    (folder / find("grouped-query-attention").folder / "solution.py").write_text("edited\n")
    assert len(status.earlier_unpassed(llama)) == 1
    # A passing Llama says nothing of its parts.
    assert status.earlier_unpassed(graded(folder, "modern-gpt", "pass")) == []
