"""What the gradebook says of a learner's missing files, once their report is back: each
check of a missing problem says it is missing, and so does the run's message, which the
empty file graded in its place had set ("no class Solution")."""

from __future__ import annotations

from pathlib import Path

from grader.classroom.gradebook.grading import relabel
from grader.classroom.gradebook.roster import Learner
from grader.registry import problems

FIRST, SECOND = problems()[:2]
EMPTY = "solution.py: no class Solution in solution.py"


def report_of(messages: dict[str, str | None]) -> dict:
    """A report of one check per problem, as `grade --json` writes it."""
    tests = [{"name": f"{p.folder}: loads", "problem": p.slug,
              "status": "error" if messages[p.slug] else "pass", "message": messages[p.slug]}
             for p in (FIRST, SECOND)]
    return {"status": "error" if all(messages.values()) else "fail",
            "message": next((m for m in messages.values() if m), None), "tests": tests,
            "problems": [{"problem": p.slug, "passed": int(not messages[p.slug]), "total": 1}
                         for p in (FIRST, SECOND)]}


def learner(handed_in: set[str]) -> Learner:
    return Learner("ada", Path("hand-ins/ada"), {
        p.folder: (b"class Solution: ..." if p.slug in handed_in else None)
        for p in (FIRST, SECOND)})


def test_a_hand_in_of_nothing_says_so() -> None:
    report = relabel(report_of({FIRST.slug: EMPTY, SECOND.slug: EMPTY}), learner(set()),
                     [FIRST, SECOND])
    assert report["message"] == "no solution.py of the 2 problems graded was handed in"
    assert all(t["message"].startswith("missing: ") for t in report["tests"])


def test_the_message_is_then_the_handed_in_files() -> None:
    """A file handed in that does not load says why; a message of the grader's own (not a
    missing file's) is kept as it is."""
    broken = "solution.py:3: SyntaxError: invalid syntax"
    report = relabel(report_of({FIRST.slug: EMPTY, SECOND.slug: broken}),
                     learner({SECOND.slug}), [FIRST, SECOND])
    assert report["message"] == broken
    own = report_of({FIRST.slug: EMPTY, SECOND.slug: EMPTY})
    own["message"] = "the grader's fork server stopped answering"
    assert relabel(own, learner(set()), [FIRST, SECOND])["message"] == own["message"]
