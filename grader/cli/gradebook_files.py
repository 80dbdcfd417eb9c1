"""What the gradebook writes for each learner and for the class: the table's columns,
the report of a learner it could not grade, a report's file name, the table itself.

Apart from grader/cli/gradebook.py so that grader/cli/roster.py, which the gradebook
calls for repositories, writes the same files without importing the gradebook back.
"""

from __future__ import annotations

import csv
import hashlib
import re
from pathlib import Path

from grader.grading.sanitise import visible

COLUMNS = ["learner", "problems_passed", "problems_total", "score", "max_score"]


def failed_report(message: str) -> dict:
    """The shape `grade --json` writes, for a learner the grader could not grade."""
    from grader.grading.provenance import provenance

    return {"version": 3, "status": "error", "message": visible(message), "score": 0,
            "max_score": 0, "problems": [], "mode": "classroom",
            "provenance": provenance({}, [], "classroom"), "tests": []}


def write_csv(path: Path, header: list[str], lines: list[list[str]]) -> None:
    """The table written to a file of its own and moved into place: a write cut short
    (a full disk) leaves the previous gradebook.csv, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(lines)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def report_stem(name: str) -> str:
    """The file name (without suffix) of a learner's reports: their safe name, with the
    characters that artifact uploads and other systems refuse percent-encoded (and
    % itself, so no two names meet), shortened with a hash if very long."""
    stem = re.sub(r'[%\\/:<>|*?"]', lambda m: f"%{ord(m.group()):02X}", name)
    if len(stem.encode()) > 180:  # file names hold 255 bytes, and suffixes follow
        short = stem.encode()[:100].decode("utf-8", errors="ignore")
        stem = short + "-" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return stem
