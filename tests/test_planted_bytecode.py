"""A hand-in's `__pycache__` is never run in place of its solution.py: Python's own
loader runs a cached file marked never to be checked against the source, so a
learner could hand in one file for the instructor to read and other code to grade."""

from __future__ import annotations

import importlib.util
import py_compile
from pathlib import Path

from conftest import grade_batch

from grader.reuse import solution_of

WRONG = """\
class Solution:
    def softmax(self, logits):
        return logits
"""
HIDDEN = """\
import torch


class Solution:
    def softmax(self, logits):
        return torch.softmax(logits, dim=-1)
"""


def plant(folder: Path, shown: str, hidden: str) -> Path:
    """`folder/solution.py` holding `shown`, and beside it the bytecode of `hidden`,
    under the name Python looks for, marked never to be checked."""
    folder.mkdir(parents=True)
    solution = folder / "solution.py"
    source = folder / "hidden.py"
    source.write_text(hidden, encoding="utf-8")
    cached = Path(importlib.util.cache_from_source(str(solution)))
    cached.parent.mkdir()
    py_compile.compile(str(source), cfile=str(cached), dfile=str(solution), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    source.unlink()
    solution.write_text(shown, encoding="utf-8")
    return solution


def test_a_classroom_grade_runs_the_solution_py_and_not_its_bytecode(tmp_path: Path) -> None:
    solution = plant(tmp_path / "problems" / "03-softmax", WRONG, HIDDEN)
    # Only the report's score is read: graded sandboxed in this test process's grading
    # process, scored as a classroom grade (the workers load a file alike in both modes).
    [graded] = grade_batch([{"problem": "softmax", "file": solution, "sandbox": True,
                             "mode": "classroom"}], tmp_path)
    assert graded["score"] == 0, graded["problems"]


def test_an_earlier_solution_is_taken_from_its_text(tmp_path: Path) -> None:
    solution = plant(tmp_path / "problems" / "03-softmax", WRONG.replace(
        "return logits", "return 'the source', __file__"), HIDDEN)
    asking = tmp_path / "problems" / "06-generate" / "solution.py"
    asking.parent.mkdir()
    asking.write_text("", encoding="utf-8")
    namespace = {"__file__": str(asking), "solution_of": solution_of}
    exec("softmax = solution_of('softmax')().softmax", namespace)  # noqa: S102
    assert namespace["softmax"](None) == ("the source", str(solution))
