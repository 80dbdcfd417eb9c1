"""A learner's checkout in a temporary folder, and the CLI run inside it.

Commands that write (`reset`, `hint`) run in a copy of the grader, the problems
and the starter snapshot, so they change the copy's files and `.gpt-kata`
status, never the repository's.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def kata_copy(tmp_path: Path) -> Path:
    """The grader, problems and starter snapshot, as a learner's checkout holds them."""
    root = tmp_path / "kata"
    ignore = shutil.ignore_patterns("__pycache__", "*.bak", ".gpt-kata")
    for part in ("grader", "problems", "data/starters"):
        shutil.copytree(ROOT / part, root / part, ignore=ignore)
    return root


def run(root: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`python -m grader ARGS` in `root`, with `stdin` (not a terminal) as its input."""
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True,
                          text=True, timeout=120, cwd=root, input=stdin)
