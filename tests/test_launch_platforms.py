"""How a process ended reads right on each platform, and a spawned gradebook grades.

The exit descriptions are pure functions of a code and a platform name, so the
Windows ones are checked here too. The gradebook's spawned grades (the path
macOS and Windows take) are forced on Linux with GPT_KATA_SPAWN_WORKERS=1.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from grader import paths
from grader.sandbox.host.ending import describe_exit
from grader.sandbox.host.pool import SPAWN_VARIABLE

ROOT = Path(__file__).resolve().parent.parent


def test_a_windows_access_violation_is_named_not_taken_for_sys_exit() -> None:
    text = describe_exit(3221225477, platform="win32")
    assert "access violation" in text and "0xC0000005" in text
    assert "sys.exit" not in text


def test_a_windows_stack_overflow_and_an_unknown_crash_are_crashes() -> None:
    assert "stack overflow" in describe_exit(0xC00000FD, platform="win32")
    unknown = describe_exit(0xC0001234, platform="win32")
    assert "crashed" in unknown and "0xC0001234" in unknown


def test_an_exit_code_is_sys_exit_on_every_platform() -> None:
    for platform in ("win32", "linux", "darwin"):
        assert "exited with code 3" in describe_exit(3, platform=platform)


def test_a_posix_signal_is_named_with_its_likely_cause() -> None:
    segfault = describe_exit(-int(signal.SIGSEGV), platform="linux")
    assert "SIGSEGV" in segfault and "crash" in segfault
    assert "CPU time limit" in describe_exit(-int(signal.SIGXCPU), platform="darwin")
    assert "out of memory" in describe_exit(-int(signal.SIGKILL), platform="linux")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forces Linux onto that path")
def test_a_gradebook_of_spawned_grades_grades_every_learner(tmp_path: Path) -> None:
    roster = tmp_path / "roster"
    for name, source in (("ada", paths.SOLUTIONS), ("bob", paths.STARTERS)):
        (roster / name / "01-crop-context").mkdir(parents=True)
        shutil.copy(source / "01-crop-context" / "solution.py", roster / name / "01-crop-context")
    out = tmp_path / "out"
    env = {**os.environ, SPAWN_VARIABLE: "1"}
    done = subprocess.run([sys.executable, "-m", "grader", "gradebook", str(roster),
                           "crop-context", "--out", str(out), "-q", "--jobs", "1",
                           "--allow-unisolated"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    reports = {name: json.loads((out / f"{name}.json").read_text()) for name in ("ada", "bob")}
    statuses = {name: [p["status"] for p in r["problems"]] for name, r in reports.items()}
    assert statuses == {"ada": ["pass"], "bob": ["error"]}, done.stderr[-2000:]
