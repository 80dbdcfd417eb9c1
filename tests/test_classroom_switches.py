"""Switches meant for tests cannot weaken a classroom grade, and a classroom report
never hides that nothing isolated the code.

GPT_KATA_SPAWN_WORKERS=1 takes the spawned path of macOS and Windows on Linux, with no
sandbox, so that the tests can run it here. In Classroom50 the learner's own workflow
sets the environment: a classroom grade must take the sandbox whatever it says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HOSTILE, ROOT

from grader.sandbox.host.pool import SPAWN_VARIABLE
from grader.sandbox.worker.machine import probe

READS_THE_REFERENCE = HOSTILE / "reads_private_files.py"
pytestmark = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and probe().landlock_abi),
    reason="classroom mode's sandbox needs Linux with Landlock")


def grade(tmp_path: Path, *args: str, env: dict[str, str]) -> tuple[int, dict, str]:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "crop-context", "--submission",
         str(READS_THE_REFERENCE), "-q", "--json", str(report), *args],
        capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    return done.returncode, json.loads(report.read_text(encoding="utf-8")), done.stderr


def test_the_spawn_switch_does_not_turn_a_classroom_grades_sandbox_off(tmp_path: Path) -> None:
    env = {**os.environ, SPAWN_VARIABLE: "1"}
    code, report, stderr = grade(tmp_path, "--classroom", env=env)
    messages = "\n".join(t["message"] or "" for t in report["tests"])
    assert code == 1, stderr
    assert report["mode"] == "classroom"
    assert "landlock" in " ".join(report["isolation"]), report["isolation"]
    assert "blocked solutions" in messages and "LEAKED solutions" not in messages, messages


def test_a_classroom_grade_allowed_to_run_unisolated_says_so_and_why(tmp_path: Path) -> None:
    env = {**os.environ, SPAWN_VARIABLE: "1"}
    _, report, stderr = grade(tmp_path, "--classroom", "--allow-unisolated", env=env)
    assert report["mode"] == "classroom", stderr
    assert report["isolation"] == [
        "unisolated:--allow-unisolated, and the workers were spawned without the sandbox"]
    assert report["provenance"]["isolation"] == report["isolation"]


def test_practice_still_takes_the_spawned_path_when_asked(tmp_path: Path) -> None:
    # The switch keeps its use outside classroom mode: the spawned-path tests need it.
    env = {**os.environ, SPAWN_VARIABLE: "1"}
    _, report, stderr = grade(tmp_path, env=env)
    assert report["mode"] == "practice", stderr
    assert report["isolation"] == []
