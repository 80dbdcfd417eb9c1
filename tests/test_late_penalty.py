"""A late penalty (reports/late.py): its rate as an instructor writes it, the share a
hand-in loses by how late it is, and the score every output then reads."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET

import pytest

from grader.reports.junit import junit_tree
from grader.reports.late import parse_penalty, parse_percent, points_lost
from grader.reports.scoring import score_report


@pytest.mark.parametrize(("text", "percent", "unit_minutes"), [
    ("10%/day", 10, 1440), ("2%/h", 2, 60), ("1%/min", 1, 1), (" 5 % / hours ", 5, 60),
    ("25%/week", 25, 10080), ("100%/d", 100, 1440), ("3%/mins", 3, 1), ("4%/days", 4, 1440)])
def test_a_rate_is_read_as_written(text: str, percent: int, unit_minutes: int) -> None:
    rate = parse_penalty(text)
    assert (rate.percent, rate.unit_minutes) == (percent, unit_minutes)


@pytest.mark.parametrize("text", ["10%", "10/day", "0%/day", "101%/h", "1.5%/h", "10%/fortnight",
                                  "-5%/h", "", "10%/day; rm -rf /", "10%/ms", "10%/hs", "10%/ds"])
def test_a_rate_that_is_not_one_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(ValueError, match=r"such as 10%/day"):
        parse_penalty(text)


def test_each_unit_begun_counts_whole_up_to_the_cap() -> None:
    hourly = parse_penalty("10%/h", most=50)
    assert [hourly.percent_for(m) for m in (0, 1, 60, 61, 90, 120, 121, 299, 301, 10_000)] == [
        0, 10, 10, 20, 20, 20, 30, 50, 50, 50]
    assert hourly.policy == "10%/h, at most 50%"
    assert parse_penalty("10%/day").policy == "10%/day"
    assert parse_percent("50%") == 50 and parse_percent("0") == 0
    with pytest.raises(ValueError):
        parse_percent("150%")



@pytest.mark.parametrize(("typed", "shown", "chinese"), [
    (["10%/day", "10 %/d", "10%/days", " 10 % / DAY "], "10%/day", "每天 10%"),
    (["2%/h", "2%/hour", "2 % / hours", "2%/H"], "2%/h", "每小时 2%"),
    (["1%/min", "1%/m", "1%/minutes", "1 %/Mins"], "1%/min", "每分钟 1%"),
    (["25%/week", "25%/weeks"], "25%/week", "每周 25%")])
def test_one_penalty_typed_any_way_is_shown_one_way(
        typed: list[str], shown: str, chinese: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The gradebook's note and Gradescope's late line (both `describe` of the report's
    `late` entry) and the rate run_autograder records read the same for every spelling
    of a penalty, in the class's language."""
    from grader.classroom.gradescope_autograder import to_gradescope
    from grader.classroom.gradescope_bundle import run_script
    from grader.reports.late import describe

    report = {"problems": [{"problem": "decode", "number": 5, "status": "pass", "passed": 2,
                            "total": 2}],
              "tests": [{"check": "c", "problem": "decode", "status": "pass"}]}

    def shown_by(text: str) -> tuple[str, str, str]:
        penalty = parse_penalty(text, most=50)
        late = score_report({**copy.deepcopy(report), "late": penalty.entry(90)})["late"]
        page = to_gradescope({**copy.deepcopy(report), "late": penalty.entry(90)}, 0.0)
        # The page's own last paragraph: its late test is there only where points are lost.
        return describe(late), page["output"].split("\n\n")[-1], run_script(False, late=penalty)

    monkeypatch.setenv("GPT_KATA_LANG", "en")
    for text in typed:
        note, line, script = shown_by(text)
        assert note == line and note.startswith(f"90 min late, {shown}, at most 50%: -"), note
        assert f"export GPT_KATA_LATE_PENALTY={shown}\n" in script
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    for text in typed:
        note, line, _ = shown_by(text)
        assert note == line and note.startswith(f"迟交 90 分钟，{chinese}，最多 50%："), note


def test_points_lost_are_whole_and_round_half_up() -> None:
    # 20% of 15 is 3; 10% of 15 is 1.5, so 2; 10% of 13 is 1.3, so 1; 100% is all.
    assert [points_lost(15, 20), points_lost(15, 10), points_lost(13, 10),
            points_lost(13, 100), points_lost(0, 50)] == [3, 2, 1, 13, 0]
    # A report read back from a file may hold anything: nothing is taken for it.
    assert [points_lost(15, p) for p in (None, "20", 20.0, True, -5, 101, 0)] == [0] * 7


def report_with(late: dict | None) -> dict:
    outcomes = [("crop-context", 1, "pass"), ("crop-context", 1, "pass"),
                ("crop-context", 1, "pass"), ("decode", 5, "pass"), ("decode", 5, "fail")]
    tests = [{"name": f"{n:02d}-{slug}: check {i}", "check": f"check {i}", "problem": slug,
              "task_id": n, "status": status, "message": None, "output": None}
             for i, (slug, n, status) in enumerate(outcomes)]
    report = {"version": 3, "status": "fail", "mode": "practice", "tests": tests,
              "problems": [{"problem": "crop-context", "number": 1, "status": "pass",
                            "passed": 3, "total": 3},
                           {"problem": "decode", "number": 5, "status": "fail", "passed": 1,
                            "total": 2}]}
    if late is not None:
        report["late"] = late
    return report


def test_the_score_every_output_reads_carries_the_penalty() -> None:
    # 10 + 5 earned; 90 minutes late at 10%/h is two hours begun, 20%: 3 points.
    late = parse_penalty("10%/h").entry(90)
    report = score_report(report_with(late))
    assert report["score"] == 12 and report["max_score"] == 20
    assert report["late"] == {"minutes": 90, "policy": "10%/h", "percent": 20,
                              "score_before": 15, "points": 3}
    # The problems keep what their checks earned: a reader sees both.
    assert [p["score"] for p in report["problems"]] == [10, 5]
    # Scored again (a report kept from an earlier run), nothing changes.
    assert score_report(copy.deepcopy(report)) == report
    assert score_report(report_with(None))["score"] == 15


def test_junit_suites_add_up_to_the_penalised_score() -> None:
    report = score_report(report_with(parse_penalty("10%/h").entry(90)))
    root = junit_tree(report).getroot()
    scores = [float(p.get("value")) for p in root.iter("property") if p.get("name") == "score"]
    assert sum(scores) == report["score"] == 12
    suite = next(s for s in root.iter("testsuite") if s.get("name") == "late penalty")
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props == {"score": "-3", "late_minutes": "90", "late_policy": "10%/h",
                     "score_before": "15"}
    ET.tostring(root)  # a well-formed tree
