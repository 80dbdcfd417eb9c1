"""A grade of many problems shared with a helper process (grader/grading/engine/helpers.py)
reports exactly what a grade in one process reports, and loses nothing when the helper
fails."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HOSTILE, ROOT
from learner_examples import mistake

from grader.grading.engine.helpers import common
from grader.registry import find

# The grade runs through the real command line; the script only says whether the helper
# was started (said on stderr as it starts, since a grade may end the process
# without returning), and can make the helper die before it grades or halfway.
SCRIPT = """
import os, sys
from grader.grading.engine import helpers
original = helpers.start_helper
def counted(*args, **kwargs):
    started = original(*args, **kwargs)
    sys.stderr.write(f"helper started: {started is not None}\\n")
    sys.stderr.flush()
    return started
helpers.start_helper = counted
if sys.argv[1] == "dies-at-once":
    helpers._help = lambda *args, **kwargs: os._exit(3)
if sys.argv[1] == "dies-midway":  # after grading the problems it took, two at most
    take = helpers.OneEnd.claim
    def claim(self, slug):
        if self.backwards and getattr(self, "asked", 0) >= 2:
            os._exit(3)
        self.asked = getattr(self, "asked", 0) + 1
        return take(self, slug)
    helpers.OneEnd.claim = claim
from grader.cli.main import main
sys.exit(main(sys.argv[2:]))
"""

# One of each outcome: a pass, known mistakes, a starter, code that crashes its worker.
FOLDER = {
    "crop-context": "reference",
    "last-logits": "starter",  # as shipped: problems/ may be solved where this runs
    "sample": "reference",
    "generate": "crop_first",  # a known mistake of its examples, written out
    "greedy": HOSTILE / "os_exit.py",
}
# What a report says of the grade (not of when or where it ran).
GRADE_KEYS = ("status", "message", "score", "max_score", "problems", "tests", "isolation",
              "goldens", "mode")


@pytest.fixture(scope="module")
def class_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("shared") / "problems"
    for slug, source in FOLDER.items():
        found = find(slug)
        target = folder / found.folder / "solution.py"
        target.parent.mkdir(parents=True)
        if source == "reference":
            source = found.reference
        elif source == "starter":
            source = ROOT / "data" / "starters" / found.folder / "solution.py"
        elif isinstance(source, str):
            source = mistake(slug, source, tmp_path_factory.mktemp("examples"))
        shutil.copyfile(source, target)
    return folder


def graded(folder: Path, jobs: int, tmp_path: Path, helper: str = "works",
           problems: tuple[str, ...] | list[str] = ()) -> tuple[dict, str]:
    report = tmp_path / f"report-{jobs}-{helper}.json"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, helper, "grade", *problems, "--submission", str(folder),
         "-q", "--jobs", str(jobs), "--json", str(report)],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 1, done.stderr  # every grade here has failures
    whole = json.loads(report.read_text(encoding="utf-8"))
    return {key: whole[key] for key in GRADE_KEYS}, done.stderr


@pytest.fixture(scope="module")
def alone(class_folder, tmp_path_factory) -> dict:
    report, said = graded(class_folder, 1, tmp_path_factory.mktemp("alone"))
    assert "helper started" not in said  # --jobs 1: no helper is even tried
    return report


def test_a_shared_grade_reports_what_one_process_reports(class_folder, alone, tmp_path):
    shared, said = graded(class_folder, 2, tmp_path)
    assert "helper started: True" in said
    assert shared == alone
    # The grade is the one the outcomes above make, not an empty one alike in both.
    statuses = {p["problem"]: p["status"] for p in shared["problems"]}
    assert statuses["crop-context"] == "pass" and statuses["sample"] == "pass"
    assert statuses["generate"] == "fail" and statuses["greedy"] != "pass"
    assert [p["number"] for p in shared["problems"]] == sorted(p["number"]
                                                             for p in shared["problems"])


@pytest.mark.parametrize("helper", ["dies-at-once", "dies-midway"])
def test_a_helper_that_dies_costs_time_not_the_grade(class_folder, alone, tmp_path, helper):
    shared, said = graded(class_folder, 2, tmp_path, helper=helper)
    assert "helper started: True" in said
    assert shared == alone


def test_a_grade_of_starters_stays_in_one_process(tmp_path):
    # Untouched starters are graded in milliseconds: a helper would cost more.
    starters = ROOT / "data" / "starters"
    report, said = graded(starters, 2, tmp_path, problems=["1", "2", "3", "4", "5"])
    assert "helper started" not in said
    assert "Traceback" not in said
    assert {p["status"] for p in report["problems"]} == {"error"}  # not implemented


@pytest.mark.parametrize("first, other, claimed", [
    (["landlock", "seccomp"], ["landlock", "seccomp"], ["landlock", "seccomp"]),
    (["landlock", "seccomp"], ["seccomp"], ["seccomp"]),
    ([], ["landlock"], ["landlock"]),  # no worker of one share said anything
    ([], [], []),
])
def test_a_shared_grade_claims_only_the_layers_every_share_ran_under(first, other, claimed):
    assert common(first, other) == claimed
