"""The learner's status: what the last grade of each exact file said.

Kept in `.gpt-kata/status.json`; `list`, `talk` and `watch` read it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from grader import paths
from grader.registry import Problem

if TYPE_CHECKING:
    from grader.grading.report import Report


def file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def load_status() -> dict:
    try:
        return json.loads((paths.STATE / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def save_status(updates: dict[str, dict]) -> None:
    status = {**load_status(), **updates}
    try:
        paths.STATE.mkdir(exist_ok=True)
        (paths.STATE / "status.json").write_text(json.dumps(status, indent=1) + "\n")
    except OSError:
        pass  # a read-only checkout still grades; it just cannot remember


def learner_status(problem: Problem) -> str:
    """pass / fail from the last grade of this exact file, else todo or not graded."""
    current = file_hash(problem.starter)
    if current is None:
        return "missing"
    recorded = load_status().get(problem.slug, {})
    if recorded.get("sha256") == current:
        return "todo" if recorded.get("starter") else recorded.get("status", "not graded")
    return "not graded"


def record(report: Report) -> None:
    """Remember a grade of the learner's own files."""
    save_status({s.problem.slug: {"sha256": file_hash(s.submission), "status": s.status,
                                  "starter": s.untouched}
                 for s in report.summaries})
