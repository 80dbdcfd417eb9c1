"""One learner with problems 01-06 done (the references, copied into a folder) and
07-08 untouched gets the same score from every output: the terminal, `grade --json`,
`grade --junit`, the gradebook's CSV, its learner report and JUnit, Gradescope's
results.json, Classroom50's result.json and the Canvas and Moodle exports."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import ROOT

from grader.classroom.classroom50 import to_classroom50
from grader.classroom.gradescope_autograder import to_gradescope
from grader.registry import problems

DONE, UNTOUCHED = problems()[:6], problems()[6:8]


def junit_total(path: Path) -> float:
    return sum(float(p.get("value")) for p in ET.parse(path).getroot().iter("property")
               if p.get("name") == "score")


def test_every_output_gives_the_same_score(tmp_path: Path) -> None:
    learner = tmp_path / "roster" / "ada" / "problems"
    for p in DONE:
        (learner / p.folder).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / p.folder / "solution.py", learner / p.folder)
    for p in UNTOUCHED:
        (learner / p.folder).mkdir(parents=True)
        # The pristine starter, not whatever the repository's problems/ hold now.
        shutil.copy(ROOT / "data" / "starters" / p.folder / "solution.py", learner / p.folder)
    slugs = [p.slug for p in (*DONE, *UNTOUCHED)]
    # Every check of 01-06 passes and none of 07-08: their full points, out of all eight.
    expected = sum(p.points for p in DONE)
    most = expected + sum(p.points for p in UNTOUCHED)
    assert 0 < expected < most

    graded = subprocess.run(
        [sys.executable, "-m", "grader", "grade", *slugs, "--submission", str(learner),
         "--json", str(tmp_path / "grade.json"), "--junit", str(tmp_path / "grade.xml"),
         "--classroom", "--allow-unisolated"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert graded.returncode == 1, graded.stderr[-2000:]
    terminal = re.search(r"(\d+)/(\d+) points", graded.stdout)
    assert terminal, graded.stdout[-2000:]
    report = json.loads((tmp_path / "grade.json").read_text())

    out = tmp_path / "out"
    book = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", str(tmp_path / "roster"), *slugs,
         "--out", str(out), "--jobs", "1", "--junit", "--allow-unisolated", "-q",
         "--canvas", str(out / "canvas.csv"), "--moodle", str(out / "moodle.csv")],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert book.returncode == 0, book.stderr[-2000:]
    with (out / "gradebook.csv").open(newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    learner_report = json.loads((out / "ada.json").read_text())
    gradescope = to_gradescope(learner_report, 1.0)
    classroom50 = to_classroom50(learner_report, {})
    with (out / "canvas.csv").open(newline="") as handle:
        canvas = list(csv.reader(handle))
    with (out / "moodle.csv").open(newline="") as handle:
        moodle = list(csv.reader(handle))

    scores = {
        "terminal": (float(terminal.group(1)), float(terminal.group(2))),
        "grade --json": (report["score"], report["max_score"]),
        "grade --junit": (junit_total(tmp_path / "grade.xml"), most),
        "gradebook.csv": (float(row["score"]), float(row["max_score"])),
        "gradebook json": (learner_report["score"], learner_report["max_score"]),
        "gradebook junit": (junit_total(out / "ada.junit.xml"), most),
        "gradescope": (gradescope["score"], gradescope["extra_data"]["max_score"]),
        "classroom50": (classroom50["score"], classroom50["max-score"]),
        "canvas": (float(canvas[2][-1]), float(canvas[1][-1])),
        "moodle": (float(moodle[1][-1]), most),
    }
    assert scores == dict.fromkeys(scores, (expected, most))


def test_a_classroom_folder_that_leaves_problems_out_scores_them_0(tmp_path: Path) -> None:
    """A hand-in of 01 alone, graded as a folder in classroom mode with no problem named,
    scores 01's points out of every problem's, as the gradebook scores it: leaving the
    unsolved ones out must not make a full score."""
    first = problems()[0]
    learner = tmp_path / "roster" / "ada" / "problems"
    (learner / first.folder).mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / first.folder / "solution.py", learner / first.folder)
    graded = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "--submission", str(learner), "-q",
         "--json", str(tmp_path / "grade.json"), "--classroom", "--allow-unisolated"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert graded.returncode == 1, graded.stderr[-2000:]
    report = json.loads((tmp_path / "grade.json").read_text())
    most = sum(p.points for p in problems())
    assert (report["score"], report["max_score"]) == (first.points, most)
    left_out = [p for p in report["problems"] if p["problem"] != first.slug]
    assert len(left_out) == len(problems()) - 1 and not any(p["score"] for p in left_out)
    assert all(t["message"].startswith(f"missing: {t['name'].split(':')[0]}/solution.py")
               for t in report["tests"] if t["problem"] != first.slug)
    out = tmp_path / "out"
    book = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", str(tmp_path / "roster"), "--out",
         str(out), "--jobs", "1", "--allow-unisolated", "-q"],
        capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert book.returncode == 0, book.stderr[-2000:]
    with (out / "gradebook.csv").open(newline="") as handle:
        (row,) = list(csv.DictReader(handle))
    assert (float(row["score"]), float(row["max_score"])) == (first.points, most)
