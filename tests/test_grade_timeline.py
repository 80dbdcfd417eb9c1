"""benchmarks/grade_timeline.py marks steps of the grader by name: each must still be
there, or the timeline would lose its marks without a word."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import grade_timeline  # noqa: E402 - from benchmarks/, put on the path above


def defined(module: str, dotted: str) -> bool:
    """Whether `module` defines `dotted` (a function, or a class's method), read from
    its source without importing it."""
    body = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text("utf-8")).body
    *owners, name = dotted.split(".")
    for owner in owners:
        body = next((node.body for node in body
                     if isinstance(node, ast.ClassDef) and node.name == owner), [])
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
               for node in body)


def test_every_step_the_timeline_marks_is_in_the_grader():
    missing = [f"{module}.{dotted}" for module, steps in grade_timeline.STEPS.items()
               for dotted in steps if not defined(module, dotted)]
    assert not missing, f"update grade_timeline.STEPS: {missing}"


def test_every_import_the_timeline_marks_exists():
    assert all(importlib.util.find_spec(name) for name in grade_timeline.IMPORTS)


def test_a_step_that_is_gone_is_told_and_the_others_still_marked(tmp_path: Path):
    import types

    marks = grade_timeline.Marks(str(tmp_path / "marks"))
    module = types.ModuleType("grader.grading.engine.plugin")  # run_checks is gone
    grade_timeline.mark_steps(marks, module)
    module = types.ModuleType("grader.learner.shown")
    module.write_reports = lambda: 7
    grade_timeline.mark_steps(marks, module)
    assert module.write_reports() == 7
    lines = [line.split("\t", 1)[1] for line in (tmp_path / "marks").read_text().splitlines()]
    assert lines == ["! grader.grading.engine.plugin.run_checks is gone: update STEPS",
                     "> write_reports", "< write_reports"]
