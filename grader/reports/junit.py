"""A grading report as JUnit XML, the format CI systems and LMS importers read.

Built from the JSON report (`Report.to_json()`), so `grade --junit` and the
gradebook write the same thing from the same data: one <testsuite> per problem,
one <testcase> per check (classname = the problem's folder, name = the test's
`check`). A check that failed is a <failure>; one that could not run (the file does not
import, the grader could not run it) is an <error>, as JUnit consumers tell them
apart. Each problem's suite carries its points as <properties> (`score`,
`max_score`), from reports/scoring.py like every other output; a late penalty
(reports/late.py) is a suite `late penalty` with no cases, whose `score` is the
points it took, negative, so that the suites' scores add up to the run's.
"""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from grader.reports.scoring import format_points, score_report
from grader.reports.written import write_whole

# XML 1.0 cannot hold most control characters at all, not even escaped, and a
# submission's printed output may contain anything.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: object) -> str:
    return _NOT_XML.sub("\ufffd", "" if value is None else str(value))


def _suite(root: ET.Element, name: str, properties: dict[str, str] | None) -> ET.Element:
    suite = ET.SubElement(root, "testsuite", name=name)
    if properties is not None:
        # <properties> comes first in a <testsuite>, as JUnit's schema orders it.
        listed = ET.SubElement(suite, "properties")
        for key, value in properties.items():
            ET.SubElement(listed, "property", name=key, value=value)
    return suite


def junit_tree(report: dict, suite: str = "gpt-kata") -> ET.ElementTree:
    report = score_report(copy.deepcopy(report))
    root = ET.Element("testsuites", name=_text(suite))
    suites: dict[str, ET.Element] = {}
    entries = {p["problem"]: p for p in report.get("problems", [])}
    folders = {p["problem"]: f"{p['number']:02d}-{p['problem']}"
               for p in report.get("problems", [])}
    tests = report.get("tests", [])
    for test in tests:
        folder = folders.get(test["problem"], f"{test['task_id']:02d}-{test['problem']}")
        # A report written before tests carried `check` is named by its whole `name`.
        name = test.get("check", test["name"])
        if folder not in suites:
            entry = entries.get(test["problem"])
            suites[folder] = _suite(root, folder, None if entry is None else {
                key: format_points(entry[key]) for key in ("score", "max_score")})
        case = ET.SubElement(suites[folder], "testcase", classname=folder, name=_text(name))
        if test["status"] != "pass":
            message = _text(test.get("message") or test["status"])
            tag = "error" if test["status"] == "error" else "failure"
            outcome = ET.SubElement(case, tag, message=message, type=test["status"])
            outcome.text = message
        if test.get("output"):
            ET.SubElement(case, "system-out").text = _text(test["output"])
    late = report.get("late")
    if isinstance(late, dict) and late.get("points"):
        # What a late penalty took, as a suite of its own whose `score` is negative:
        # the suites' scores still add up to the run's.
        _suite(root, "late penalty", {
            "score": format_points(-late["points"]),
            "late_minutes": str(late.get("minutes", "")),
            "late_policy": _text(late.get("policy", "")),
            "score_before": format_points(late.get("score_before"))})
    # The run's message repeats the checks' errors when every check errored; a
    # message of the grader's own (or one with no checks at all) gets a case.
    if report.get("message") and (not tests or any(t["status"] != "error" for t in tests)):
        # The grader itself could not run something: say so where CI shows errors.
        case = ET.SubElement(_suite(root, "grader", None), "testcase",
                             classname="grader", name="grader")
        ET.SubElement(case, "error", message=_text(report["message"]))
    for element in [*root.iter("testsuite"), root]:
        results = [list(c) for c in element.iter("testcase")]
        element.set("tests", str(len(results)))
        element.set("failures", str(sum(any(e.tag == "failure" for e in r) for r in results)))
        element.set("errors", str(sum(any(e.tag == "error" for e in r) for r in results)))
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit(report: dict, path: Path, suite: str = "gpt-kata") -> None:
    """Written whole or not at all (grader/reports/written.py)."""
    tree = junit_tree(report, suite)
    text = ET.tostring(tree.getroot(), encoding="unicode")
    write_whole(path, "<?xml version='1.0' encoding='utf-8'?>\n" + text)
