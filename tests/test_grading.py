"""Every reference passes every check, and every untouched starter is "not implemented".

Both are graded in this test process's grading process (conftest.grade_batch), in the
sandbox, one report a problem as `gpt-kata grade --json` writes it; the command's own
grade of many problems is tested in test_cli.py and test_grade_shared.py.
"""

from __future__ import annotations

import pytest
from conftest import grade_batch, messages

from grader.paths import STARTERS
from grader.registry import problems

# A track at a time: the suite's processes share the tracks' grades between them.
TRACKS = list(dict.fromkeys(p.track for p in problems()))


@pytest.mark.parametrize("track", TRACKS, ids=[f"track-{n}" for n in range(1, len(TRACKS) + 1)])
def test_reference_solutions_pass_every_check(tmp_path, track):
    everyone = [p for p in problems() if p.track == track]
    reports = grade_batch([{"problem": p.slug, "file": p.reference, "sandbox": True}
                           for p in everyone], tmp_path)
    for problem, report in zip(everyone, reports, strict=True):
        assert [s["problem"] for s in report["problems"]] == [problem.slug]
        assert report["status"] == "pass", (problem.slug, messages(report))
        assert all(t["status"] == "pass" for t in report["tests"]), problem.slug
        assert report["max_score"] >= 5, problem.slug  # several checks per problem


def test_untouched_starters_fail_as_not_implemented(tmp_path):
    # The snapshot, not problems/: a learner's solved problems must not fail this.
    everyone = problems()
    reports = grade_batch([{"problem": p.slug, "file": STARTERS / p.folder / "solution.py",
                            "sandbox": True} for p in everyone], tmp_path)
    for problem, report in zip(everyone, reports, strict=True):
        # Every check errored (nothing is implemented): Exercism's run status for that
        # is error.
        assert report["status"] == "error" and report["message"], problem.slug
        [summary] = report["problems"]
        assert summary["status"] == "error" and summary["passed"] == 0, summary
        assert report["tests"], problem.slug
        for test in report["tests"]:
            assert "not implemented yet" in test["message"], test
            assert test["kind"] == "not-implemented" and test["mistake"] is None, test
            assert "\n" not in test["message"]
