"""Gradescope's autograder: a report turned into its results.json, and the run itself.

`run_autograder` in a bundle from `gpt-kata gradescope` runs
`python -m grader.grading.gradescope`, which finds the submission under the
autograder root (`/autograder`, or `$GPT_KATA_AUTOGRADER_ROOT`), grades it
with `gpt-kata gradebook` as a class of one (its solution files copied out as
data and graded by `grade --classroom` in a process of its own) and writes
`results/results.json` in Gradescope's format: one test per check, each worth its
share of its problem's points (grading/scoring.py), with the report's provenance in
`extra_data`.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.grading.provenance import provenance
from grader.grading.sanitise import markdown_cell, visible
from grader.grading.scoring import format_points, score_report
from grader.sandbox.launch import grader_command, neutral_folder

ROOT_VARIABLE = "GPT_KATA_AUTOGRADER_ROOT"
# Set to 1 by a bundle built with --allow-unisolated.
UNISOLATED_VARIABLE = "GPT_KATA_ALLOW_UNISOLATED"
# The bundle's file that holds the commit it was built from, alone on its line.
BUNDLE_COMMIT = "COMMIT"


def to_gradescope(report: dict, execution_time: float) -> dict:
    """The report of `grade --json` as Gradescope's results.json: one test per check,
    each worth its share of its problem's points, and the report's own score."""
    report = score_report(copy.deepcopy(report))
    tests = []
    for test in report.get("tests", []):
        passed = test.get("status") == "pass"
        output = test.get("message") or ("passed" if passed else test.get("status", "failed"))
        if test.get("output"):
            output += f"\n\nyour code printed:\n{test['output']}"
        tests.append({
            "name": test.get("name", "?"),
            "score": test["score"],
            "max_score": test["max_score"],
            "status": "passed" if passed else "failed",
            "output": output,
            "visibility": "visible",
        })
    rows = [f"{p.get('number', 0):>2} {p.get('problem', '?'):<22} {p.get('status', '?'):<7} "
            f"{p.get('passed', 0):>2}/{p.get('total', 0):<2} checks "
            f"{format_points(p['score']):>6}/{format_points(p['max_score'])} points"
            for p in report.get("problems", [])]
    # Markdown, with the table in a code block: Gradescope shows it in a fixed-width
    # font with its columns lined up (as plain text its spaces would collapse).
    parts = ["```text\n" + "\n".join(rows) + "\n```"] if rows else []
    parts.append(f"score {format_points(report['score'])}/{format_points(report['max_score'])}")
    if report.get("message"):
        parts.append(f"grader: {markdown_cell(report['message'])}")
    # A report the grader could not write has none: then at least what ran here.
    extra = {"max_score": report["max_score"],
             "provenance": report.get("provenance") or provenance({}, [], "classroom")}
    return {
        "score": report["score"],
        "execution_time": round(execution_time, 3),
        "output": "\n\n".join(parts) if rows or report.get("message") else "nothing was graded",
        "output_format": "md",
        "visibility": "visible",
        "extra_data": extra,
        "tests": tests,
    }


def submission_root(submission: Path) -> Path:
    """Where the kata is in the submission, found as the gradebook finds a learner's
    (grader/cli/layouts.py): an upload of a zipped folder arrives as that folder,
    perhaps beside __MACOSX/, so a lone folder (or src/) is looked into, never a link."""
    from grader.cli.layouts import find

    found = find(submission, submission.resolve(), str(submission), [])
    if found.looked_for:
        return submission  # the gradebook looks again (into a zip too) and says what it sought
    folder = found.folder
    return folder.parent if folder.name == "problems" and folder != submission else folder


def grade(submission: Path, work: Path) -> dict:
    """The submission's report: graded as the one learner of a class, so that it is
    graded as data in classroom mode and a missing problem still counts its checks."""
    roster = work / "roster"
    roster.mkdir()
    (roster / "submission").symlink_to(submission_root(submission).resolve(),
                                       target_is_directory=True)
    unisolated = os.environ.get(UNISOLATED_VARIABLE) == "1"
    command = grader_command("grader", "gradebook", str(roster), "--out", str(work / "out"),
                             "--jobs", "1", "-q", *(["--allow-unisolated"] if unisolated else []))
    # This grader's gradebook, whatever the submission holds (a grader/ folder of its own).
    done = subprocess.run(command, capture_output=True, text=True, cwd=neutral_folder())
    try:
        return json.loads((work / "out" / "submission.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        last = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        # whatever the grader's stderr held is shown, never obeyed
        return {"message": f"the grader could not run: {visible(last[0])}", "tests": []}


def name_bundle_commit(graded: dict, commit_file: Path) -> None:
    """An installed grader knows no commit; the bundle's BUNDLE_COMMIT file holds the
    one it was built from, and nothing else."""
    grader = graded["extra_data"]["provenance"].setdefault("grader", {})
    if grader.get("commit"):
        return
    try:
        commit = commit_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return
    if re.fullmatch("[0-9a-f]{40}", commit):
        grader["commit"] = commit


def run(root: Path) -> int:
    started = time.monotonic()
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    submission = root / "submission"
    if not submission.is_dir():
        report = {"message": f"no submission folder at {submission}", "tests": []}
    else:
        with tempfile.TemporaryDirectory(prefix="gpt-kata-gradescope-") as work:
            report = grade(submission, Path(work))
    graded = to_gradescope(report, time.monotonic() - started)
    name_bundle_commit(graded, root / "source" / BUNDLE_COMMIT)
    # Written last and whole, after every process that ran the submission has ended.
    tmp = results.with_suffix(".tmp")
    tmp.write_text(json.dumps(graded, indent=2) + "\n", encoding="utf-8")
    tmp.replace(results)
    print(graded["output"])
    print(f"score {format_points(graded['score'])}/"
          f"{format_points(graded['extra_data']['max_score'])}")
    return 0


def main() -> int:
    root = Path(os.environ.get(ROOT_VARIABLE) or "/autograder")
    return run(root)


if __name__ == "__main__":
    sys.exit(main())
