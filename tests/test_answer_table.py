"""A table of the fixed cases' answers, as the learners' copy holds them, earns no
points for them in a counted grade: in classroom mode a problem's fixed cases count
only once its drawn examples pass, and under the instructor's seed those are new."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import torch
from conftest import ROOT, reference_solution

from grader.checks.softmax import check_softmax
from grader.grading.subject.strategies import SEED_VARIABLE
from grader.reports.scoring import score_report

TABLE_SUBMISSION = '''\
import hashlib

import torch

ANSWERS = {answers!r}


class Solution:
    def softmax(self, logits):
        key = hashlib.sha256(logits.numpy().tobytes() + str(logits.shape).encode()).hexdigest()
        if key not in ANSWERS:
            raise KeyError("not in the table")
        values, shape = ANSWERS[key]
        return torch.tensor(values, dtype=logits.dtype).reshape(shape)
'''


def key(logits: torch.Tensor) -> str:
    return hashlib.sha256(logits.numpy().tobytes() + str(logits.shape).encode()).hexdigest()


def table_of_answers() -> str:
    """What a learner could write from the learners' copy: each fixed case's input,
    and the reference's answer to it."""
    reference = reference_solution("03-softmax")
    answers = {}
    for (logits,) in check_softmax.CONTRACT.case_args.values():
        answer = reference.softmax(logits.clone())
        answers[key(logits)] = (answer.flatten().tolist(), list(answer.shape))
    return TABLE_SUBMISSION.format(answers=answers)


def graded(tmp_path: Path, *mode: str) -> dict:
    file = tmp_path / "table.py"
    file.write_text(table_of_answers(), encoding="utf-8")
    report = tmp_path / "report.json"
    env = {**os.environ, SEED_VARIABLE: "an instructor's seed 51c2"}
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "softmax", "--submission",
                           str(file), "-q", "--json", str(report), *mode],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert report.exists(), done.stderr[-3000:]
    return json.loads(report.read_text(encoding="utf-8"))


def test_a_table_of_the_copys_answers_earns_nothing_for_them_in_classroom_mode(
        tmp_path: Path) -> None:
    practice = graded(tmp_path)
    fixed = [t for t in practice["tests"] if t["cases"] == "fixed"]
    drawn = [t for t in practice["tests"] if t["cases"] == "drawn"]
    # The table answers every fixed case, and no drawn example.
    assert fixed and all(t["status"] == "pass" for t in fixed)
    assert drawn and all(t["status"] != "pass" for t in drawn)
    assert practice["score"] >= 7
    classroom = graded(tmp_path, "--classroom", "--allow-unisolated")
    others = [t for t in classroom["tests"] if t["cases"] is None]
    share = 10 * len(others) / len(classroom["tests"])
    assert classroom["score"] <= round(share + 0.5), classroom["problems"]
    assert classroom["problems"][0]["fixed_counted"] is False
    assert all(t["score"] == 0 for t in classroom["tests"] if t["cases"] == "fixed")


def report(mode: str, drawn_status: str) -> dict:
    tests = [{"problem": "softmax", "status": "pass", "cases": "fixed"} for _ in range(6)]
    tests += [{"problem": "softmax", "status": drawn_status, "cases": "drawn"},
              {"problem": "softmax", "status": "pass", "cases": None}]
    passed = sum(t["status"] == "pass" for t in tests)
    return {"mode": mode, "tests": tests,
            "problems": [{"problem": "softmax", "passed": passed, "total": len(tests)}]}


def test_fixed_cases_count_in_practice_and_once_the_drawn_examples_pass() -> None:
    assert score_report(report("practice", "fail"))["score"] == 9
    assert score_report(report("classroom", "pass"))["score"] == 10
    gated = score_report(report("classroom", "fail"))
    assert gated["score"] == 1  # one of eight checks: 1.25 points, rounded down
    assert gated["problems"][0]["fixed_counted"] is False
    # Scoring twice changes nothing.
    assert score_report(gated)["score"] == 1
