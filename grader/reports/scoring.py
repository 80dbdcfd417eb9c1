"""Points: the one place a grade becomes a score.

Each problem is worth its registry `points` (10 unless set, a whole number); a
problem earns the share of its points that its checks passed, in whole points,
rounded half up (3 of 4 checks on a 10-point problem: 8), and its full points only
when every check passes (23 of 24 checks: 9, not 10). Whole points, because
Classroom50 takes only integers and an LMS column shows them without surprises;
the same numbers are then exact in every output. The run's score is the sum over
its problems, out of the sum of their points. A problem that was not graded at all
(missing, or the grader could not run it) earns nothing but still counts in
max_score, so every learner of a class is scored out of the same total.

In classroom mode a problem's checks other than its drawn examples count only once
its drawn examples pass. The learners' copy holds every fixed case's inputs and
answer, so a table of answers keyed by the inputs could pass them; and a check that
judges a guard, not an answer (a refusal of bad arguments, softmax written by hand,
the same output twice) passes for a file that computes nothing: a `raise
ValueError` in every method passed 22 of them, 16 points of 350. The drawn
examples, under the instructor's seed, are new to every learner and need the
answer computed. A problem whose drawn examples fail earns the share of its
passing drawn examples only (`fixed_counted` false in its entry, a name kept from
when only the fixed cases waited).

A late hand-in (a report's `late` entry, reports/late.py) loses its penalty's
share of the run's score, in whole points; the problems' own scores stay what
their checks earned, so that a reader sees both.

Every output reads the score from here, through `score_report` on the JSON
report: the terminal summary, `grade --json`, gradebook.csv and the LMS exports,
Gradescope's results.json, the JUnit properties and Classroom50's result.
"""

from __future__ import annotations

from collections import Counter

from grader.registry import DEFAULT_POINTS, problems
from grader.reports.late import apply_late

DIGITS = 2  # places a per-check share or a hand-made score is shown with


def problem_score(points: int, passed: int, total: int) -> int:
    """The whole points a problem earns with `passed` of its `total` checks passing."""
    if total <= 0 or passed <= 0 or points <= 0:
        return 0
    if passed >= total:
        return points
    # Half up, in integers: no float ever decides a point.
    share = (2 * points * passed + total) // (2 * total)
    return max(0, min(share, points - 1))


def check_share(points: float, total: int) -> float:
    """What one check of a problem is worth (for formats that score each check)."""
    return round(points / total, 6) if total > 0 else 0.0


def registry_points(slug: str | None) -> int:
    return next((p.points for p in problems() if p.slug == slug), DEFAULT_POINTS)


def score_report(report: dict) -> dict:
    """`report` (the shape `grade --json` writes) with every score set from its
    problems' passed/total and points: each problem's `points` and `score`, each
    test's share, and the run's `score`/`max_score`. Changes and returns `report`;
    applying it twice changes nothing."""
    problem_entries = report.get("problems") or []
    tests = [t for t in report.get("tests") or [] if isinstance(t, dict)]
    uncounted = uncounted_undrawn(report, tests)
    earned: dict[str | None, int] = {}
    worth: dict[str | None, int] = {}
    counts: dict[str | None, int] = {}
    for entry in problem_entries:
        slug = entry.get("problem")
        points = int(entry.get("max_score", registry_points(slug)))
        total = int(entry.get("total") or 0)
        passed = int(entry.get("passed") or 0)
        if slug in uncounted:
            passed = max(0, passed - uncounted[slug])
            entry["fixed_counted"] = False
        entry["max_score"] = points
        entry["score"] = problem_score(points, passed, total)
        earned[slug], worth[slug], counts[slug] = entry["score"], points, total
    for test in tests:
        slug = test.get("problem")
        share = check_share(worth.get(slug, 0.0), counts.get(slug, 0))
        counted = not (slug in uncounted and test.get("cases") != "drawn")
        test["max_score"] = share
        test["score"] = share if test.get("status") == "pass" and counted else 0.0
    # A late hand-in loses its share of what it earned (reports/late.py).
    report["score"] = apply_late(report, sum(earned.values()))
    report["max_score"] = sum(worth.values())
    return report


def uncounted_undrawn(report: dict, tests: list[dict]) -> dict[str | None, int]:
    """In a classroom report, each problem whose drawn examples do not all pass, with
    how many of its other checks passed and so do not count."""
    if report.get("mode") != "classroom":
        return {}
    failed_drawn = {t.get("problem") for t in tests
                    if t.get("cases") == "drawn" and t.get("status") != "pass"}
    return dict(Counter(t.get("problem") for t in tests if t.get("problem") in failed_drawn
                        and t.get("cases") != "drawn" and t.get("status") == "pass"))


def format_points(value: float | int | str | None) -> str:
    """A score as a table shows it: 7.5, 13.33, 10 (never 10.0 or 13.333333)."""
    try:
        number = round(float(value or 0), DIGITS)
    except (TypeError, ValueError):
        return "0"
    return f"{number:.{DIGITS}f}".rstrip("0").rstrip(".")
