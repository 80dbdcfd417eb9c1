"""Broken and hostile submissions fail cleanly, with a plain message, and grading goes on."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ROOT, SUBMISSIONS

HOSTILE = SUBMISSIONS / "hostile"

# submission -> words the learner must see in the message
FAILS_WITH = {
    "segfault.py": "killed by signal",
    "os_exit.py": "exited with code 3",
    "mutates_input.py": "changed its input `context` in place",
    "returns_object.py": "cannot read",
    "writes_protocol.py": "crop_context()",
}

# submissions that cannot be loaded at all: one plain line with file and line
UNLOADABLE = {
    "syntax_error.py": "syntax_error.py:2: SyntaxError",
    "missing_class.py": "no class Solution in missing_class.py",
    "missing_method.py": "class Solution has no method crop_context()",
    "sys_exit_on_import.py": "SystemExit: bye",
}


def folder_with(tmp_path: Path, name: str) -> Path:
    """A submission folder like problems/: the hostile crop-context, the reference decode."""
    root = tmp_path / "submission"
    (root / "01-crop-context").mkdir(parents=True)
    (root / "05-decode").mkdir(parents=True)
    shutil.copy(HOSTILE / name, root / "01-crop-context" / "solution.py")
    shutil.copy(ROOT / "solutions" / "05-decode" / "solution.py", root / "05-decode")
    return root


@pytest.mark.parametrize("name", sorted(FAILS_WITH))
def test_hostile_submission_fails_cleanly_and_grading_goes_on(grade, tmp_path, name):
    run = grade("crop-context", "decode", "--submission", folder_with(tmp_path, name),
                "--timeout", "5")
    assert run.code == 1, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    problems = {p["problem"]: p for p in run.report["problems"]}
    assert problems["crop-context"]["status"] in ("fail", "error")
    assert problems["decode"]["status"] == "pass"  # the next problem was still graded
    assert FAILS_WITH[name] in run.messages()


def test_hang_times_out_and_grading_goes_on(grade, tmp_path):
    run = grade("crop-context", "decode", "--submission", folder_with(tmp_path, "hang.py"),
                "--timeout", "1")
    assert run.code == 1
    assert "no answer within 1 seconds" in run.messages()
    assert {p["problem"]: p["status"] for p in run.report["problems"]}["decode"] == "pass"


@pytest.mark.parametrize("name", sorted(UNLOADABLE))
def test_unloadable_submission_is_one_plain_line(grade, name):
    run = grade("crop-context", "--submission", HOSTILE / name)
    assert run.code == 1
    assert run.report["problems"][0]["status"] == "error"
    messages = {t["message"] for t in run.report["tests"]}
    assert len(messages) == 1
    (message,) = messages
    assert "\n" not in message
    assert UNLOADABLE[name] in message
    assert "Traceback" not in run.stdout + run.stderr


def test_prints_and_stdin_do_not_disturb_grading(grade):
    run = grade("crop-context", "--submission", HOSTILE / "noisy_and_reads_stdin.py")
    assert run.code == 0, run.messages()
    outputs = [t["output"] for t in run.report["tests"] if t["output"]]
    assert outputs and outputs[0].startswith("debugging")
    assert all(len(o) <= 600 for o in outputs)  # truncated, with a visible marker
    assert any(o.endswith("(output truncated)") for o in outputs)
