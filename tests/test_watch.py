"""`gpt-kata watch` without a terminal: one plain line per grade, a new grade per save."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT


def test_watch_grades_again_on_each_save(tmp_path: Path) -> None:
    kata = tmp_path / "kata"
    shutil.copytree(ROOT / "data" / "starters", kata / "problems")
    shutil.copy(ROOT / "problems" / "registry.toml", kata / "problems")
    target = kata / "problems" / "01-crop-context" / "solution.py"
    starter = target.read_text()
    shutil.copy(ROOT / "solutions" / "01-crop-context" / "solution.py", target)
    watcher = subprocess.Popen(
        [sys.executable, "-m", "grader", "watch", "crop-context", "--stay"], cwd=kata,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert watcher.stdout is not None
    try:
        first = watcher.stdout.readline()
        assert "01-crop-context pass (7/7 checks pass" in first, first
        time.sleep(0.3)  # a modification time of its own for the save
        target.write_text(starter)
        second = watcher.stdout.readline()
        assert "01-crop-context error (0/7 checks pass" in second, second
    finally:
        watcher.kill()
        watcher.wait()
    assert "Traceback" not in (watcher.stderr.read() if watcher.stderr else "")
