"""A class of 20 learners graded end to end by `gpt-kata gradebook`, checked cell by cell."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from grader.maintainer.synthetic_class import PROBLEMS, make_roster
from grader.sandbox.worker.machine import probe


def test_a_class_of_twenty(tmp_path: Path) -> None:
    roster, out, marker = tmp_path / "roster", tmp_path / "out", tmp_path / "cheated"
    expected = make_roster(roster, marker)
    assert len(expected) == 20
    # Where the sandbox can run, the class is graded as it would be for real:
    # classroom mode with no way around it.
    unisolated = [] if probe().landlock_abi else ["--allow-unisolated"]
    # A call of an honest learner's takes milliseconds; 10 s leaves room for a loaded
    # machine, whose time-out would fail the cell in this run (it is graded again only
    # on the next). The endless loop still fails.
    done = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", str(roster), *PROBLEMS, "--out", str(out),
         "--jobs", "2", "--timeout", "10", "-q", *unisolated],
        capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    with (out / "gradebook.csv").open(newline="") as book:
        rows = list(csv.DictReader(book))
    assert [row["learner"] for row in rows] == sorted(expected)
    for row in rows:
        cells = {problem: row[problem] for problem in PROBLEMS}
        assert cells == expected[row["learner"]], row["learner"]
        passed = sum(cell == "pass" for cell in cells.values())
        assert int(row["problems_passed"]) == passed, row["learner"]
        assert int(row["problems_total"]) == len(PROBLEMS)
        assert (out / f"{row['learner']}.json").is_file()
    assert not marker.exists(), "the clone's own grader/ ran"
