"""`from grader import check; check("decode", Solution)` grades a class from a notebook.

IPython keeps every cell's source where `inspect.getsource` finds it, as it does
for a module loaded from a file, so a module loaded from a temporary file stands
in for a notebook here; `python -c` stands in for a session that keeps none.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.notebook import CheckError, solution_file
from grader.registry import find
from tests.conftest import ROOT

# A decode written the way a learner might in a notebook: a helper in another
# cell, torch under another name.
CELLS = '''\
import torch as T


def as_list(ids):
    if isinstance(ids, T.Tensor):
        return ids.reshape(-1).tolist()
    return list(ids)


class MyDecoder:
    def decode(self, ids, int_to_char):
        return "".join(int_to_char[int(i)] for i in as_list(ids))


class FirstRowOnly:
    def decode(self, ids, int_to_char):
        if isinstance(ids, T.Tensor) and ids.dim() == 2:
            ids = ids[0][:1]
        return "".join(int_to_char[int(i)] for i in as_list(ids))
'''

SCRIPT = '''\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("cells", sys.argv[1])
cells = importlib.util.module_from_spec(spec)
sys.modules["cells"] = cells
spec.loader.exec_module(cells)
from grader import check
print("RESULT", check("decode", getattr(cells, sys.argv[2])))
'''


def python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def report_lines(stdout: str) -> list[str]:
    """The report itself: without the header line, which names the source graded."""
    return [line for line in stdout.splitlines()
            if not line.startswith(("gpt-kata grading", "RESULT"))]


def test_importing_grader_stays_light() -> None:
    done = python("-c", "import sys, grader\n"
                        "print(sorted(m for m in ('torch', 'pytest', 'grader.notebook') "
                        "if m in sys.modules))\n"
                        "from grader import check\nprint(check.__module__)")
    assert done.stdout.split("\n")[:2] == ["[]", "grader.notebook"], done.stderr


@pytest.mark.parametrize("name, passes", [("MyDecoder", True), ("FirstRowOnly", False)])
def test_a_class_from_a_notebook_gets_the_report_grade_prints(tmp_path: Path, name: str,
                                                              passes: bool) -> None:
    cells = tmp_path / "cells.py"
    cells.write_text(CELLS)
    checked = python("-c", SCRIPT, str(cells), name)
    assert f"RESULT {passes}" in checked.stdout, checked.stdout + checked.stderr

    # The same class saved as a solution file and graded by the command line.
    problem = find("decode")
    file = tmp_path / "problems" / problem.folder / "solution.py"
    file.parent.mkdir(parents=True)
    module = _load(cells)
    file.write_text(solution_file(problem, getattr(module, name), vars(module)))
    graded = python("-m", "grader", "grade", "decode", "--submission", str(file))
    assert graded.returncode == (0 if passes else 1), graded.stderr
    assert report_lines(checked.stdout) == report_lines(graded.stdout)
    assert ("5/5 checks pass" in checked.stdout) is passes


def _load(path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("cells_for_test", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["cells_for_test"] = module
    spec.loader.exec_module(module)
    return module


def test_a_class_without_source_gets_a_message_not_a_traceback() -> None:
    done = python("-c", textwrap.dedent('''\
        class Solution:
            def decode(self, ids, int_to_char):
                return ""
        from grader import check
        print("RESULT", check("decode", Solution))
        '''))
    assert "RESULT False" in done.stdout, done.stderr
    assert "cannot find the source of Solution" in done.stdout
    assert "problems/05-decode/solution.py" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_name_from_the_notebook_that_cannot_travel_is_named(tmp_path: Path) -> None:
    cells = tmp_path / "scaled.py"
    cells.write_text("SCALE = 2\n\nclass Solution:\n"
                     "    def softmax(self, logits):\n        return logits * SCALE\n")
    module = _load(cells)
    with pytest.raises(CheckError, match="uses SCALE"):
        solution_file(find("softmax"), module.Solution, vars(module))


def test_an_unknown_problem_is_a_message(tmp_path: Path) -> None:
    done = python("-c", "from grader import check\nprint('RESULT', check('decoed', int))")
    assert "RESULT False" in done.stdout and "did you mean decode" in done.stdout
