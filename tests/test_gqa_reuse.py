"""Statement 34 offers `solution_of("rope")` for the learner's RoPE of problem 32, and the
lines it gives pass in the sandbox as written."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest
from conftest import grade_in_folder, messages

from grader.registry import find
from grader.sandbox.worker import machine

needs_landlock = pytest.mark.skipif(machine.probe().landlock_abi < 1,
                                    reason="no Landlock on this kernel")

CODE = re.compile(r"( *)```python\n(\1from grader\.reuse import solution_of\n.*?)\1```",
                  re.DOTALL)
SLUG = "grouped-query-attention"


def offered() -> str:
    """The solution_of lines statement 34 gives."""
    [(_, lines)] = CODE.findall(find(SLUG).statement.read_text(encoding="utf-8"))
    return textwrap.dedent(lines)


def test_the_statement_offers_the_learners_rope() -> None:
    assert 'apply_rope = solution_of("rope")().apply_rope' in offered()
    # And the starter says so where the stub is: the shipped starter's snapshot, since
    # problems/ is the learner's and may hold their answer.
    starter = Path(__file__).resolve().parent.parent / "data" / "starters" / find(SLUG).folder
    assert 'solution_of("rope")().apply_rope' in (starter / "solution.py").read_text(
        encoding="utf-8")


def without_apply_rope(source: str) -> str:
    return re.sub(r"\ndef apply_rope\(.*?\n(?=\n\nclass )", "\n", source, flags=re.DOTALL)


@needs_landlock
def test_an_attention_built_on_the_learners_rope_passes(tmp_path: Path) -> None:
    problems = tmp_path / "learner" / "problems"
    rope = find("rope")
    (problems / rope.folder).mkdir(parents=True)
    shutil.copy(rope.reference, problems / rope.folder / "solution.py")
    problem = find(SLUG)
    source = without_apply_rope(problem.reference.read_text(encoding="utf-8"))
    assert "def apply_rope(" not in source
    imports = "from torchtyping import TensorType\n"
    source = source.replace(imports, imports + "\n" + offered(), 1)
    (problems / problem.folder).mkdir()
    (problems / problem.folder / "solution.py").write_text(source)
    report = grade_in_folder(problems, SLUG, tmp_path)
    assert report["status"] == "pass", messages(report)
