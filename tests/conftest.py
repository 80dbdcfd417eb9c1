"""Shared helpers: run the grader as a learner or CI would, and read its JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

# Every test process, and every grader it starts, computes with one thread: the
# cores are shared by pytest-xdist's workers, and with more threads than cores
# OpenMP's waiting threads slow tiny tensor work down many times over.
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"


@dataclass
class GradeRun:
    code: int
    report: dict | None
    stdout: str
    stderr: str

    def messages(self) -> str:
        return "\n".join(t["message"] or "" for t in (self.report or {}).get("tests", []))


def run_grade(*args: str | Path, tmp_path: Path, timeout: float = 600) -> GradeRun:
    """`python -m grader grade ARGS --json FILE`, in a subprocess, as a user runs it."""
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", *map(str, args), "--json", str(report_path)],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return GradeRun(done.returncode, report, done.stdout, done.stderr)


def grade_batch(jobs: list[dict], tmp_path: Path, timeout: float = 900) -> list[dict]:
    """Grade several submissions in one grading process (tests/grade_batch.py).

    Each report has the shape `gpt-kata grade --json` writes. A crash of the
    batch process fails the calling test with its stderr.
    """
    jobs_file, out_file = tmp_path / "jobs.json", tmp_path / "reports.json"
    jobs_file.write_text(json.dumps([{**job, "file": str(job["file"])} for job in jobs]))
    done = subprocess.run(
        [sys.executable, str(Path(__file__).parent / "grade_batch.py"), str(jobs_file),
         str(out_file)],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out_file.read_text())


def messages(report: dict) -> str:
    return "\n".join(t["message"] or "" for t in report.get("tests", []))


@pytest.fixture
def grade(tmp_path: Path):
    def _grade(*args: str | Path) -> GradeRun:
        return run_grade(*args, tmp_path=tmp_path)

    return _grade
