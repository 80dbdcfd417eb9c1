"""A table of the fixed cases' answers, as the learners' copy holds them, earns no
points for them in a counted grade: in classroom mode a problem's fixed cases count
only once its drawn examples pass, and under the instructor's seed those are new."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import torch
from conftest import BatchServer, grade_batch, reference_solution

from grader.checks.softmax import check_softmax
from grader.grading.subject.examples_seed import SEED_VARIABLE
from grader.registry import STARTERS, problems
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


# The answers' grades, under an instructor's seed: a grading process of this module's
# own, since the seed is read as the checks load. Each is graded sandboxed, as `gpt-kata
# grade` grades (what its --classroom does to a report's mode is
# test_classroom_switches.py's, through the command).
SEEDED = BatchServer({SEED_VARIABLE: "an instructor's seed 51c2"})


def test_a_table_of_the_copys_answers_earns_nothing_for_them_in_classroom_mode(
        tmp_path: Path) -> None:
    file = tmp_path / "table.py"
    file.write_text(table_of_answers(), encoding="utf-8")
    practice, classroom = SEEDED.grade(
        [{"problem": "softmax", "file": file, "sandbox": True, "mode": mode}
         for mode in ("practice", "classroom")], timeout=300)
    fixed = [t for t in practice["tests"] if t["cases"] == "fixed"]
    drawn = [t for t in practice["tests"] if t["cases"] == "drawn"]
    # The table answers every fixed case, and no drawn example.
    assert fixed and all(t["status"] == "pass" for t in fixed)
    assert drawn and all(t["status"] != "pass" for t in drawn)
    assert practice["score"] >= 7
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


def test_other_checks_count_in_practice_and_once_the_drawn_examples_pass() -> None:
    assert score_report(report("practice", "fail"))["score"] == 9
    assert score_report(report("classroom", "pass"))["score"] == 10
    gated = score_report(report("classroom", "fail"))
    # Neither the fixed cases nor the other check (a refusal, say) count.
    assert gated["score"] == 0
    assert gated["problems"][0]["fixed_counted"] is False
    assert all(t["score"] == 0 for t in gated["tests"])
    # Scoring twice changes nothing.
    assert score_report(gated)["score"] == 0


def test_a_drawn_example_that_passes_counts_beside_one_that_fails() -> None:
    tests = [{"problem": "bpe", "status": "pass", "cases": "drawn"},
             {"problem": "bpe", "status": "fail", "cases": "drawn"},
             {"problem": "bpe", "status": "pass", "cases": None},
             {"problem": "bpe", "status": "pass", "cases": "fixed"}]
    scored = score_report({"mode": "classroom", "tests": tests, "problems": [
        {"problem": "bpe", "passed": 3, "total": 4}]})
    assert scored["score"] == 3  # one of four checks of 10 points: 2.5, rounded up
    assert [t["score"] for t in scored["tests"]] == [2.5, 0.0, 0.0, 0.0]


def test_a_file_that_only_raises_valueerror_earns_nothing_in_classroom_mode(
        tmp_path: Path) -> None:
    """Every method raising ValueError passes the checks that judge a guard (refusals,
    softmax written by hand, the same output twice); in a classroom grade they count
    only once the drawn examples pass, so such a hand-in scores 0."""
    slugs = ["softmax", "temperature", "windows", "attention-head", "grouped-query-attention"]
    folder = tmp_path / "hand-in"
    for problem in (p for p in problems() if p.slug in slugs):
        # The shipped starter: problems/ may hold the learner's solutions.
        starter = (STARTERS / problem.folder / "solution.py").read_text(encoding="utf-8")
        assert "raise NotImplementedError" in starter, problem.slug
        (folder / problem.folder).mkdir(parents=True)
        (folder / problem.folder / "solution.py").write_text(
            re.sub(r"raise NotImplementedError\(.*\)",
                   'raise ValueError("invalid argument")', starter), encoding="utf-8")
    # One report of the five, as `gpt-kata grade SLUGS --submission FOLDER` writes it,
    # in each mode; graded sandboxed in this test process's grading process.
    files = {problem.slug: folder / problem.folder / "solution.py"
             for problem in problems() if problem.slug in slugs}
    practice, classroom = grade_batch(
        [{"files": files, "sandbox": True, "mode": mode} for mode in ("practice", "classroom")],
        tmp_path)
    assert practice["score"] >= len(slugs), practice["problems"]  # the guards pass
    assert classroom["score"] == 0, classroom["problems"]
    assert all(t["score"] == 0 for t in classroom["tests"])
