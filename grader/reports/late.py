"""A late penalty: what share of its points a late hand-in loses.

`10%/day` takes 10% of the points a hand-in earned for each day, or part of a
day, it is late, the way Canvas's and Moodle's own late policies count; `2%/h`
counts hours, `1%/min` minutes; however a unit is typed (`10 %/d`, `10%/days`),
every output shows it one way, in the class's language. A cap (`at most 50%`)
keeps a very late hand-in from losing everything. Percents are whole numbers,
and the points lost are whole points rounded half up, so that every output
(gradebook.csv, the LMS exports, JUnit, Gradescope, Classroom50) shows the same
exact score.

The penalty travels in the JSON report as `late` (`minutes`, `policy`,
`percent`) and is applied where every score is made, `scoring.score_report`,
which adds `score_before` and `points` (the points lost). How late a hand-in is
comes from where it was handed in: the commit the gradebook graded
(classroom/gradebook/repositories.py), or Gradescope's submission time
(classroom/gradescope_autograder.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from grader.locale import marked, tr, translated

# The units a penalty may count in, in minutes; several spellings each.
UNITS = {"min": 1, "m": 1, "minute": 1, "h": 60, "hour": 60, "d": 1440, "day": 1440,
         "week": 10080}
# Each unit's one spelling, whichever the instructor typed ("10 %/d" and "10%/days" are
# both 10%/day): what run_autograder records, parsed again on Gradescope.
SPELLINGS = {1: "min", 60: "h", 1440: "day", 10080: "week"}
# The rate as a reader sees it, in the class's language (marked: tr takes no variable).
RATES = {1: marked("{percent}%/min"), 60: marked("{percent}%/h"),
         1440: marked("{percent}%/day"), 10080: marked("{percent}%/week")}


@dataclass(frozen=True)
class LatePenalty:
    percent: int  # lost per unit started
    unit: str  # its one spelling (SPELLINGS), however it was typed
    unit_minutes: int
    most: int = 100  # the cap, in percent

    @property
    def rate(self) -> str:
        """The rate as `parse_penalty` reads it, the same in every language: "10%/day"."""
        return f"{self.percent}%/{self.unit}"

    @property
    def policy(self) -> str:
        """The rate and its cap for a reader, in the class's language: the same words
        for every way of typing the same penalty."""
        cap = tr(", at most {most}%", most=self.most) if self.most < 100 else ""
        return translated(RATES[self.unit_minutes]).format(percent=self.percent) + cap

    def percent_for(self, minutes: int) -> int:
        """The share lost by a hand-in `minutes` late: each unit begun counts whole."""
        if minutes <= 0:
            return 0
        return min(self.most, self.percent * math.ceil(minutes / self.unit_minutes))

    def entry(self, minutes: int) -> dict:
        """The report's `late` entry for a hand-in `minutes` late."""
        return {"minutes": minutes, "policy": self.policy, "percent": self.percent_for(minutes)}


def parse_penalty(text: str, most: int = 100) -> LatePenalty:
    """`10%/day`, `2%/h`, `1%/min`: whole percents per unit of lateness begun."""
    match = re.fullmatch(r"\s*(\d{1,3})\s*%\s*/\s*([a-z]+)\s*", text.lower())
    unit = match[2] if match else ""
    if unit not in UNITS and len(unit) > 2 and unit.removesuffix("s") in UNITS:
        unit = unit.removesuffix("s")  # a word's plural (mins, hours, days): not ms or hs
    if not match or unit not in UNITS or not 0 < int(match[1]) <= 100:
        raise ValueError(f"{text!r}: a whole percent per unit, such as 10%/day, 2%/h or "
                         "1%/min (1 to 100%)")
    minutes = UNITS[unit]
    return LatePenalty(int(match[1]), SPELLINGS[minutes], minutes, most)


def parse_percent(text: str) -> int:
    """`50%` (or `50`): a whole percent from 0 to 100."""
    match = re.fullmatch(r"\s*(\d{1,3})\s*%?\s*", text)
    if not match or int(match[1]) > 100:
        raise ValueError(f"{text!r}: a whole percent from 0 to 100, such as 50%")
    return int(match[1])


def points_lost(score: int, percent: object) -> int:
    """Whole points `percent` takes from `score`, half up; nothing for a percent a
    report should not hold (it is data read back from a file)."""
    if isinstance(percent, bool) or not isinstance(percent, int) or not 0 < percent <= 100:
        return 0
    return (score * percent * 2 + 100) // 200


def apply_late(report: dict, raw: int) -> int:
    """The score after the report's `late` entry, if any, is applied to `raw`; the
    entry gets `score_before` and `points` (lost)."""
    late = report.get("late")
    if not isinstance(late, dict):
        return raw
    lost = points_lost(raw, late.get("percent"))
    late["score_before"], late["points"] = raw, lost
    return raw - lost


def describe(late: dict | None) -> str:
    """One line for a reader: '90 min late, 10%/h: -2 points (was 15)'."""
    if not isinstance(late, dict) or not late.get("minutes"):
        return ""
    text = tr("{span} late", span=late_span(int(late["minutes"])))
    if late.get("policy"):
        points = late.get("points", 0)
        text += (tr(", {policy}: -{points} point", policy=late["policy"], points=points)
                 if points == 1 else
                 tr(", {policy}: -{points} points", policy=late["policy"], points=points))
        if late.get("points"):
            text += tr(" (from {score})", score=late.get("score_before"))
    return text


def late_span(minutes: int) -> str:
    if minutes < 120:
        return tr("{minutes} min", minutes=minutes)
    if minutes < 2 * 1440:
        return tr("{hours} h", hours=f"{minutes / 60:.1f}".removesuffix(".0"))
    return tr("{days} days", days=f"{minutes / 1440:.1f}".removesuffix(".0"))
