"""Every statement's examples can be reproduced with `grader.play`, as the statement says.

Each statement shows two setup lines and then a Python session (`>>>` lines
with the values the reader should see). Here the session of every statement
runs with the reference solution as `Solution`, and doctest compares what it
prints with what the statement shows.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader.registry import Problem, problems
from tests.conftest import ROOT

FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SETUP = 'from grader.play import *\nglobals().update(examples("{slug}"))'


def python_blocks(problem: Problem) -> list[str]:
    return FENCE.findall(problem.statement.read_text(encoding="utf-8"))


def reference_class(problem: Problem) -> type:
    spec = importlib.util.spec_from_file_location(f"reference_{problem.slug}", problem.reference)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Solution


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)
def test_the_statement_says_how_to_run_its_examples(problem: Problem) -> None:
    setups = [b for b in python_blocks(problem) if b.startswith("from grader.play import")]
    assert len(setups) == 1, f"{problem.statement} shows no (or more than one) setup block"
    assert setups[0].startswith(SETUP.format(slug=problem.slug))


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)
def test_the_statements_session_gives_the_values_it_shows(problem: Problem) -> None:
    from grader.play import examples

    session = "\n".join(b for b in python_blocks(problem) if b.lstrip().startswith(">>>"))
    names = examples(problem.slug, solution=reference_class(problem))
    test = doctest.DocTestParser().get_doctest(session, names, problem.folder,
                                               str(problem.statement), 0)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    result = runner.run(test, out=report.append)
    assert result.attempted > 0, f"{problem.statement} has no >>> example to reproduce"
    assert result.failed == 0, "".join(report)


def test_play_loads_neither_pytest_nor_the_sandbox() -> None:
    probe = ("import sys, grader.play\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('pytest', 'hypothesis') or m in ('grader.sandbox.process', "
             "'grader.sandbox.isolation', 'grader.sandbox.worker', 'grader.sandbox.forkserver')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


def test_examples_give_the_learners_own_solution(tmp_path: Path) -> None:
    # A kata folder of the learner's, where 09 holds a solution of theirs.
    folder = tmp_path / "kata" / "problems" / "09-top-k"
    folder.mkdir(parents=True)
    mine = "# mine\n" + (ROOT / "solutions" / "09-top-k" / "solution.py").read_text()
    (folder / "solution.py").write_text(mine)
    script = ('from grader.play import *\nglobals().update(examples("top-k"))\n'
              "import inspect\nprint(inspect.getsourcefile(Solution))\n"
              "print(Solution().top_k_filter(logits, 1).isfinite().sum().item(), "
              "decode(encode('Lily')))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=tmp_path / "kata", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert Path(lines[0]).resolve() == (folder / "solution.py").resolve()
    assert lines[1] == "1 Lily"
