"""A grading report as JUnit XML, the format CI systems and LMS importers read.

Built from the JSON report (`Report.to_json()`), so `grade --junit` and the
gradebook write the same thing from the same data: one <testsuite> per problem,
one <testcase> per check (classname = the problem's folder, name = the check).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

# XML 1.0 cannot hold most control characters at all, not even escaped, and a
# submission's printed output may contain anything.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: object) -> str:
    return _NOT_XML.sub("\ufffd", "" if value is None else str(value))


def junit_tree(report: dict, suite: str = "gpt-kata") -> ET.ElementTree:
    root = ET.Element("testsuites", name=_text(suite))
    suites: dict[str, ET.Element] = {}
    folders = {p["problem"]: f"{p['number']:02d}-{p['problem']}"
               for p in report.get("problems", [])}
    for test in report.get("tests", []):
        folder = folders.get(test["problem"], f"{test['task_id']:02d}-{test['problem']}")
        name = test["name"].removeprefix(f"{folder}: ")
        if folder not in suites:
            suites[folder] = ET.SubElement(root, "testsuite", name=folder)
        case = ET.SubElement(suites[folder], "testcase", classname=folder, name=_text(name))
        if test["status"] != "pass":
            message = _text(test.get("message") or test["status"])
            failure = ET.SubElement(case, "failure", message=message, type=test["status"])
            failure.text = message
        if test.get("output"):
            ET.SubElement(case, "system-out").text = _text(test["output"])
    if report.get("message"):
        # The grader itself could not run something: say so where CI shows errors.
        case = ET.SubElement(ET.SubElement(root, "testsuite", name="grader"), "testcase",
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
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_tree(report, suite).write(path, encoding="utf-8", xml_declaration=True)
