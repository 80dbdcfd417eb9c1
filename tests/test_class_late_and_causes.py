"""A class of repositories with a late learner, a failed clone, nothing handed in by
the deadline and a broken file: every output (gradebook.csv, the table, each report,
JUnit, Canvas, Moodle, Gradescope) gives each learner the same score out of the
same total, with the late penalty applied and each cause named."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import timedelta
from pathlib import Path

from conftest import ROOT
from test_roster import CROP, DEADLINE, commit

from grader.classroom.gradescope_autograder import to_gradescope

SOLVED = (ROOT / "solutions" / CROP / "solution.py").read_text()


def junit_total(path: Path) -> float:
    return sum(float(p.get("value")) for p in ET.parse(path).getroot().iter("property")
               if p.get("name") == "score")


def test_a_class_is_scored_alike_everywhere_with_late_work_and_causes(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    on_time = commit(repos / "ada", {f"problems/{CROP}/solution.py": SOLVED},
                     DEADLINE - timedelta(hours=1))
    # 90 minutes late, inside a grace of 2 h: graded, and 10%/h takes 2 hours begun.
    late = commit(repos / "cy", {f"problems/{CROP}/solution.py": SOLVED},
                  DEADLINE + timedelta(minutes=90))
    # Only a commit after the grace: nothing handed in.
    commit(repos / "dee", {f"problems/{CROP}/solution.py": SOLVED}, DEADLINE + timedelta(hours=5))
    commit(repos / "eve", {f"problems/{CROP}/solution.py": "def crop(:\n"},
           DEADLINE - timedelta(hours=2))
    roster = tmp_path / "roster.csv"
    roster.write_text("learner,repository\n" + "".join(
        f"{name},file://{repos / name}\n" for name in ("ada", "bo", "cy", "dee", "eve")))
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", "--roster", str(roster), "crop-context",
         "--deadline", "2026-12-01T23:59Z", "--late-policy", "grace:2h",
         "--late-penalty", "10%/h", "--allow-local-repos", "--allow-unisolated", "--junit",
         "--canvas", str(out / "canvas.csv"), "--moodle", str(out / "moodle.csv"),
         "--jobs", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env=None)
    assert done.returncode == 1, done.stderr[-3000:]  # bo was not graded

    with (out / "gradebook.csv").open(newline="") as handle:
        table = {row["learner"]: row for row in csv.DictReader(handle)}
    reports = {name: json.loads((out / f"{name}.json").read_text()) for name in table}
    with (out / "canvas.csv").open(newline="") as handle:
        _, possible, *canvas_rows = list(csv.reader(handle))
    canvas = {row[0]: row[-1] for row in canvas_rows}
    with (out / "moodle.csv").open(newline="") as handle:
        moodle = {row[1]: row[-1] for row in list(csv.reader(handle))[1:]}
    assert possible[-1] == "10"

    # What each learner earned: crop-context is worth 10 points.
    expected = {"ada": 10, "bo": 0, "cy": 8, "dee": 0, "eve": 0}
    for name, score in expected.items():
        report = reports[name]
        gradescope = to_gradescope(report, 1.0)
        scores = {
            "gradebook.csv": (float(table[name]["score"]), float(table[name]["max_score"])),
            "report": (report["score"], report["max_score"]),
            "junit": (junit_total(out / f"{name}.junit.xml"), 10),
            "gradescope": (gradescope["score"], gradescope["extra_data"]["max_score"]),
            "gradescope tests": (sum(t["score"] for t in gradescope["tests"]),
                                 sum(t["max_score"] for t in gradescope["tests"])),
        }
        assert scores == dict.fromkeys(scores, (score, 10)), name
        # The LMS records no grade for a learner who was not graded, never a 0.
        lms = "" if name == "bo" else str(score)
        assert (canvas[name], moodle[name]) == (lms, lms), name

    # The late learner: the policy and the minutes beside the score, everywhere.
    assert (table["cy"]["commit"], table["cy"]["late_minutes"], table["cy"]["late_penalty"]) == (
        late, "90", "2")
    assert reports["cy"]["late"] == {"minutes": 90, "policy": "10%/h", "percent": 20,
                                     "score_before": 10, "points": 2}
    assert table["cy"]["note"].startswith("90 min late, 10%/h: -2 points (from 10)")
    assert (table["ada"]["commit"], table["ada"]["late_penalty"]) == (on_time, "0")
    assert "late" not in reports["ada"]
    # Each cause named in its learner's row and report.
    assert table["bo"]["note"].startswith("not graded: ") and "could not be read" in \
        table["bo"]["note"] and table["bo"]["crop-context"] == "error"
    assert "could not be read" in reports["bo"]["message"]
    assert table["dee"]["note"].startswith("no commit on the default branch by")
    assert table["dee"]["crop-context"] == "missing"
    assert table["eve"]["crop-context"] == "fail"
    assert "SyntaxError" in to_gradescope(reports["eve"], 1.0)["tests"][0]["output"]
    # The table printed at the end says the same.
    assert "not graded" in done.stdout and "90 min late" in done.stdout

    # Graded again with nothing changed: the same scores, the penalty applied once.
    again = subprocess.run(done.args, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert again.returncode == 1, again.stderr[-3000:]
    with (out / "gradebook.csv").open(newline="") as handle:
        rows = {row["learner"]: row for row in csv.DictReader(handle)}
    assert {n: rows[n]["score"] for n in rows} == {n: str(s) for n, s in expected.items()}
