"""Grading from inside a learner's clone runs the installed grader, never the clone's own.

The fake clone holds a `grader/` package of its own: a copy of the real one whose
fork server skips the sandbox and whose worker loads the reference instead of the
learner's file. Whatever imports it grades the untouched starter as a pass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader import paths
from grader.classroom.gradescope_bundle import run_script
from grader.sandbox.host.launch import WRONG_GRADER, grader_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="grades in classroom mode, which needs Linux's sandbox")

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = "01-crop-context"
GPT_KATA = Path(sys.executable).with_name("gpt-kata")


def patched(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the fake grader no longer fits {path.name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def fake_clone(folder: Path) -> Path:
    """A learner's clone: the starter of 01, and a grader that passes anything."""
    (folder / "problems" / PROBLEM).mkdir(parents=True)
    shutil.copy(paths.STARTERS / PROBLEM / "solution.py", folder / "problems" / PROBLEM)
    fake = folder / "grader"
    shutil.copytree(paths.PACKAGE, fake, ignore=shutil.ignore_patterns("__pycache__", "_kata"))
    patched(fake / "sandbox" / "worker" / "serve.py", '        self.path = path\n',
            f'        path = {str(paths.SOLUTIONS)!r} + "/" + Path(path).parent.name'
            ' + "/solution.py"\n        self.path = path\n')
    patched(fake / "sandbox" / "host" / "forkserver.py",
            '\n    if request.get("isolate"):\n        from grader.sandbox.worker.isolation',
            '\n    if False:\n        from grader.sandbox.worker.isolation')
    # A clone holds the kata's files too; here they are the checkout's.
    patched(fake / "paths.py", 'ROOT = _SHIPPED if INSTALLED else PACKAGE.parent\n',
            f'ROOT = Path({str(paths.ROOT)!r})\n')
    return folder


def statuses(report: dict) -> dict[str, str]:
    return {p["problem"]: p["status"] for p in report.get("problems", [])}


def test_the_fake_grader_would_pass_the_starter(tmp_path: Path) -> None:
    """The attack is real: run from the clone, its own grader passes the starter."""
    clone = fake_clone(tmp_path / "clone")
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "--classroom",
                           "--submission", "problems", "crop-context", "--json", str(report)],
                          cwd=clone, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(clone)})
    assert json.loads(report.read_text())["problems"][0]["status"] == "pass", done.stderr


def test_classroom_grade_from_inside_a_clone_is_the_honest_fail(tmp_path: Path) -> None:
    clone = fake_clone(tmp_path / "clone")
    report = tmp_path / "report.json"
    subprocess.run([str(GPT_KATA), "grade", "--classroom", "--submission", "problems",
                    "crop-context", "--json", str(report)],
                   cwd=clone, capture_output=True, text=True, timeout=600)
    graded = json.loads(report.read_text())
    assert statuses(graded) == {"crop-context": "error"}
    assert "the starter still raises NotImplementedError" in json.dumps(graded)


def test_a_gradebook_run_from_inside_a_clone_grades_with_the_installed_grader(
        tmp_path: Path) -> None:
    clone = fake_clone(tmp_path / "clone")
    roster = tmp_path / "roster"
    (roster / "ada" / PROBLEM).mkdir(parents=True)
    shutil.copy(paths.STARTERS / PROBLEM / "solution.py", roster / "ada" / PROBLEM)
    out = tmp_path / "out"
    subprocess.run([str(GPT_KATA), "gradebook", str(roster), "crop-context", "--out", str(out),
                    "-q", "--jobs", "1"],
                   cwd=clone, capture_output=True, text=True, timeout=600)
    graded = json.loads((out / "ada.json").read_text())
    assert statuses(graded) == {"crop-context": "error"}
    assert "the starter still raises NotImplementedError" in json.dumps(graded)


def test_run_autograder_grades_a_submission_holding_a_grader_with_the_installed_one(
        tmp_path: Path) -> None:
    root = tmp_path / "autograder"
    clone = fake_clone(root / "submission")
    script = tmp_path / "run_autograder"
    script.write_text(run_script(allow_unisolated=False), encoding="utf-8")
    script.chmod(0o755)
    env = {**os.environ, "GPT_KATA_AUTOGRADER_ROOT": str(root),
           "GPT_KATA_PYTHON": sys.executable}
    done = subprocess.run([str(script)], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=900)
    results = json.loads((root / "results" / "results.json").read_text())
    crop = [t for t in results["tests"] if t["name"].startswith(PROBLEM)]
    assert crop, done.stdout[-2000:]
    assert all(t["status"] == "failed" for t in crop)
    assert "the starter still raises NotImplementedError" in crop[0]["output"]


def test_the_bootstrap_refuses_another_grader_package(tmp_path: Path) -> None:
    """Started with another `grader` first on its path, it says so and exits."""
    fake_clone(tmp_path / "clone")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "clone")}
    done = subprocess.run(grader_command("grader.sandbox.worker.serve"), env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == WRONG_GRADER
    assert "refusing to start grader.sandbox.worker.serve" in done.stderr
    assert str(tmp_path / "clone" / "grader") in done.stderr


def test_python_m_grader_in_a_checkout_another_install_serves_says_what_to_do(
        tmp_path: Path) -> None:
    """`python -m grader` in a second checkout, in an environment that installs the
    first: every process the grade started would refuse to run. It is stopped before
    any starts, with the two folders and the way out, not graded as a stopped server."""
    clone = fake_clone(tmp_path / "clone")
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "crop-context"],
                          cwd=clone, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"installed grader is the one in {paths.PACKAGE}, not this folder's" in done.stderr
    assert f"`pip install -e .` in {clone}" in done.stderr
    assert "fork server" not in done.stdout + done.stderr
    # The commands that start no process run as before.
    listed = subprocess.run([sys.executable, "-m", "grader", "list"], cwd=clone,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0 and "crop-context" in listed.stdout, listed.stderr
