"""`gpt-kata watch` without a terminal: one plain line per grade, a new grade per save."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from conftest import ROOT
from learner import learner_kata

# Far beyond any grade: a watcher that never prints fails the test instead of hanging it.
PATIENCE = 300.0


def next_line(watcher: subprocess.Popen[str]) -> str:
    assert watcher.stdout is not None
    ready, _, _ = select.select([watcher.stdout], [], [], PATIENCE)
    assert ready, f"watch printed nothing within {PATIENCE:g} s"
    return watcher.stdout.readline()


@contextlib.contextmanager
def watching(kata: Path, problem: str) -> Iterator[subprocess.Popen[str]]:
    """`gpt-kata watch PROBLEM --stay` running in `kata`; it must end without a traceback."""
    watcher = subprocess.Popen(
        [sys.executable, "-m", "grader", "watch", problem, "--stay"], cwd=kata,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        yield watcher
    finally:
        watcher.kill()
        watcher.wait()
    assert "Traceback" not in (watcher.stderr.read() if watcher.stderr else "")


def test_watch_grades_again_on_each_save(tmp_path: Path) -> None:
    kata = learner_kata(tmp_path)
    target = kata / "problems" / "01-crop-context" / "solution.py"
    starter = target.read_text()
    shutil.copy(ROOT / "solutions" / "01-crop-context" / "solution.py", target)
    with watching(kata, "crop-context") as watcher:
        first = next_line(watcher)
        assert "01-crop-context pass (7/7 checks pass" in first, first
        time.sleep(0.3)  # a modification time of its own for the save
        target.write_text(starter)
        second = next_line(watcher)
        assert "01-crop-context error (0/7 checks pass" in second, second


def test_saving_an_earlier_solution_a_problem_uses_grades_it_again(tmp_path: Path) -> None:
    from test_reuse import TOP_K_TOP_P  # 11 built with solution_of("top-k") and (10)

    kata = learner_kata(tmp_path)
    for folder in ("09-top-k", "10-top-p"):
        shutil.copy(ROOT / "solutions" / folder / "solution.py",
                    kata / "problems" / folder / "solution.py")
    (kata / "problems" / "11-top-k-top-p" / "solution.py").write_text(TOP_K_TOP_P)
    top_k = kata / "problems" / "09-top-k" / "solution.py"
    with watching(kata, "top-k-top-p") as watcher:
        first = next_line(watcher)
        assert "11-top-k-top-p pass" in first, first
        time.sleep(0.3)  # a modification time of its own for the save
        shutil.copy(ROOT / "data" / "starters" / "09-top-k" / "solution.py", top_k)
        second = next_line(watcher)
        assert second.split()[1:3] == ["11-top-k-top-p", "error"], second
