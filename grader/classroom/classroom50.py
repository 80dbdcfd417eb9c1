"""Classroom50's autograder: a learner's checkout graded, its result.json written.

Classroom50 runs the instructor's `CLASSROOM/autograders/ASSIGNMENT/autograder.py`
from their own config repository, with the learner's checkout as the working
directory, and reads `./result.json` when it exits 0 (a non-zero exit is an
infrastructure error). .github/classroom50/autograder.py in this repository is
that file: it installs the instructor's pinned grader and runs
`python -m grader.classroom.classroom50`, which grades the checkout as a class of
one, exactly as `gpt-kata gradebook` grades a learner (as Gradescope's does:
solution files copied out as data, graded by `grade --classroom` in a process of
its own, a missing problem scored 0 out of its full points), and writes
result.json in the `classroom50/result/v1` shape: one test per problem, its
points, passed only when every check passes.

Classroom50's contract (foundation50/classroom50, wiki/Advanced-Autograding.md,
"The result.json contract", and schemas/result-v1.schema.json): `score` and
`max-score` are integers, the sums of the tests' own; each test has `test-name`,
`passed`, `score` and `max-score`, and may carry fields of its own.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import tempfile
from pathlib import Path

from grader.grading.values.sanitise import visible

SCHEMA = "classroom50/result/v1"
# What the runner hands every autograder (and stamps again itself: owner,
# assignment_type and datetime are its own, whatever an autograder writes).
IDENTITY = {"classroom": "CLASSROOM", "assignment": "ASSIGNMENT", "owner": "OWNER",
            "submission": "SUBMISSION_TAG", "commit": "COMMIT_URL", "release": "RELEASE_URL"}


def whole_points(earned: float, possible: float, passed: bool) -> tuple[int, int]:
    """Points as Classroom50 takes them, whole numbers: rounded as its own pytest tests
    round a share of their points, and never full marks for a problem not passed."""
    most = round(possible)
    score = max(0, min(most, round(earned)))
    if not passed:
        score = min(score, max(0, most - 1))
    return score, most


def problem_points(entry: dict, earned: float, possible: float) -> tuple[float, float]:
    """A problem's points as the report gives them (its own score and max_score, the
    one scoring every report uses), else its checks' points added up."""
    if "max_score" not in entry:
        return earned, possible
    if "score" in entry:
        return entry["score"], entry["max_score"]
    share = entry.get("passed", 0) / entry["total"] if entry.get("total") else 0
    return entry["max_score"] * share, entry["max_score"]


def problem_tests(report: dict) -> list[dict]:
    """One Classroom50 test per problem of the report, its points the sum of its checks'."""
    earned: dict[str, float] = {}
    possible: dict[str, float] = {}
    for test in report.get("tests", []):
        slug = test.get("problem")
        earned[slug] = earned.get(slug, 0) + (test.get("score") or 0)
        possible[slug] = possible.get(slug, 0) + (test.get("max_score") or 0)
    tests = []
    for entry in report.get("problems", []):
        slug = entry.get("problem")
        passed = entry.get("status") == "pass"
        score, most = whole_points(*problem_points(entry, earned.get(slug, 0),
                                                   possible.get(slug, 0)), passed)
        tests.append({
            "test-name": f"{entry.get('number', 0):02d}-{slug}",
            "passed": passed,
            "score": score,
            "max-score": most,
            # Fields of our own, kept as they are by the runner and the score collection.
            "status": entry.get("status"),
            "checks": f"{entry.get('passed', 0)}/{entry.get('total', 0)}",
        })
    return tests


def to_classroom50(report: dict, env: dict[str, str],
                   now: datetime.datetime | None = None) -> dict:
    """The report of a class of one (gradebook's LEARNER.json) as result.json."""
    tests = problem_tests(report)
    when = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    identity = {key: env.get(variable, "") for key, variable in IDENTITY.items()}
    return {
        "schema": SCHEMA,
        "classroom": identity["classroom"],
        "assignment": identity["assignment"],
        "assignment_type": env.get("ASSIGNMENT_TYPE") or "individual",
        "owner": identity["owner"] or env.get("USERNAME", ""),
        "submission": identity["submission"],
        "commit": identity["commit"],
        "release": identity["release"],
        "review": env.get("REVIEW_URL") or identity["commit"],
        "datetime": when,
        "score": sum(t["score"] for t in tests),
        "max-score": sum(t["max-score"] for t in tests),
        "tests": tests,
    }


def run(submission: Path, result: Path, env: dict[str, str]) -> int:
    from grader.classroom.gradescope_autograder import grade

    with tempfile.TemporaryDirectory(prefix="gpt-kata-classroom50-") as work:
        report = grade(submission, Path(work))
    if not report.get("tests"):
        # Nothing graded is the grader's trouble, not a score of 0: Classroom50 shows a
        # non-zero exit as an error and leaves the submission's last grade standing.
        print(f"::error::gpt-kata graded nothing: {visible(report.get('message'))}",
              file=sys.stderr)
        return 1
    graded = to_classroom50(report, env)
    # Written last and whole, after every process that ran the learner's code has ended,
    # to a new file of its own: a name the learner's checkout already holds (a link to
    # elsewhere, say) is replaced, never written through.
    handle, tmp = tempfile.mkstemp(prefix=".result-", suffix=".tmp", dir=result.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(json.dumps(graded, indent=2) + "\n")
    os.replace(tmp, result)
    for test in graded["tests"]:
        print(f"{test['test-name']:<28} {test['status']:<8} {test['checks']:>7} checks  "
              f"{test['score']}/{test['max-score']}")
    print(f"score {graded['score']}/{graded['max-score']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.classroom.classroom50",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--submission", required=True, type=Path,
                        help="the learner's checkout (its problems/ is graded)")
    parser.add_argument("--result", required=True, type=Path,
                        help="where result.json goes (the checkout's, for Classroom50)")
    args = parser.parse_args(argv)
    return run(args.submission, args.result, dict(os.environ))


if __name__ == "__main__":
    sys.exit(main())
