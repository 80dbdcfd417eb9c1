"""A learner's checkout in a temporary folder, and the CLI run inside it.

Commands that write (`reset`, `hint`) run in a copy of the grader, the problems
and the starter snapshot, so they change the copy's files and `.gpt-kata`
status, never the repository's.

The copy's solutions are the pristine starters (data/starters/), never the files
in the repository's problems/: those belong to whoever works through the kata, and
a problem solved there must not change what a test sees.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

STARTERS = ROOT / "data" / "starters"


def fresh_problems(problems: Path) -> Path:
    """`problems` as a fresh clone has it: the registry, the statements, the starters."""
    shutil.copytree(STARTERS, problems)
    shutil.copy(ROOT / "problems" / "registry.toml", problems)
    for folder in problems.iterdir():
        for name in ("README.md", "README.zh.md"):  # the kata's text, in each language
            statement = ROOT / "problems" / folder.name / name
            if statement.is_file():  # not the learner's work
                shutil.copy(statement, folder)
    return problems


def learner_kata(tmp_path: Path) -> Path:
    """A learner's folder graded by this checkout's grader: only problems/, fresh."""
    kata = tmp_path / "kata"
    fresh_problems(kata / "problems")
    return kata


def kata_copy(tmp_path: Path) -> Path:
    """A fresh clone: the grader, the starter snapshot and fresh problems/."""
    root = tmp_path / "kata"
    shutil.copytree(ROOT / "grader", root / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(STARTERS, root / "data" / "starters")
    fresh_problems(root / "problems")
    return root


def run(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`python -m grader ARGS` in `root`, with `stdin` (not a terminal) as its input."""
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True,
                          text=True, timeout=120, cwd=root, input=stdin)
