"""The reference solutions pass every check; the untouched starters fail as not implemented."""

from __future__ import annotations

from grader.paths import STARTERS
from grader.registry import problems


def test_reference_solutions_pass_every_check(grade):
    run = grade("--reference")
    assert run.code == 0, run.messages()
    assert run.report["status"] == "pass"
    graded = {p["problem"] for p in run.report["problems"]}
    assert graded == {p.slug for p in problems()}
    assert all(t["status"] == "pass" for t in run.report["tests"])
    assert run.report["max_score"] >= 5 * len(graded)  # several checks per problem


def test_untouched_starters_fail_as_not_implemented(grade):
    # The snapshot, not problems/: a learner's solved problems must not fail this.
    run = grade("--submission", STARTERS)
    assert run.code == 1
    # Every check errored (nothing is implemented): Exercism's run status for that is error.
    assert run.report["status"] == "error" and run.report["message"]
    for summary in run.report["problems"]:
        assert summary["status"] == "error", summary
        assert summary["passed"] == 0
    for test in run.report["tests"]:
        assert "not implemented yet" in test["message"], test
        assert test["kind"] == "not-implemented" and test["mistake"] is None, test
        assert "\n" not in test["message"]
    assert "Traceback" not in run.stdout + run.stderr
