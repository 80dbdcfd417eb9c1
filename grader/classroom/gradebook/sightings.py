"""What each gradebook run saw of each learner's repository, so that a deadline is
judged on what was seen and not on the dates a commit claims.

A commit's date is the committer's word: `GIT_COMMITTER_DATE` backdates a commit
pushed a day late to a minute before the deadline. What the grader knows for itself
is when it fetched, and which commits it found. DIR/.repos/sightings.json keeps, per
learner, the time of every run that fetched their repository and the run in which
each commit was first found. A commit absent from a run was pushed after that run:
if that run came after the deadline, the commit is late whatever its date says.

A run at the deadline itself (`gpt-kata gradebook --roster ... --fetch-only`, from a
scheduled job) makes the record exact: everything pushed after it is seen as late.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from grader.classroom.gradebook.outputs import replace_whole

SIGHTINGS_FILE = "sightings.json"
VERSION = 1


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


@dataclass
class Sightings:
    """The record of one gradebook folder: learner -> {url, runs, first}."""

    path: Path
    learners: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> Sightings:
        """The record in `folder`; an empty one if there is none or it is unreadable
        (then every commit is judged by its date, as without a record, and said so)."""
        path = folder / SIGHTINGS_FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)
        if not (isinstance(raw, dict) and raw.get("version") == VERSION
                and isinstance(raw.get("learners"), dict)):
            return cls(path)
        learners = {name: entry for name, entry in raw["learners"].items()
                    if _well_formed(entry)}
        return cls(path, learners)

    def record(self, learner: str, url: str, commits: list[str], at: datetime) -> None:
        """This run found `commits` (every commit reachable from the default branch's
        head) in the learner's repository at `at`. Another URL starts afresh."""
        entry = self.learners.get(learner)
        if entry is None or entry["url"] != url:
            entry = {"url": url, "runs": [], "first": {}}
            self.learners[learner] = entry
        entry["runs"].append(iso(at))
        run = len(entry["runs"]) - 1
        for sha in commits:
            entry["first"].setdefault(sha, run)

    def absent_at(self, learner: str, sha: str) -> datetime | None:
        """The last run that did not find `sha` (it was pushed after it), or None if
        the first run that fetched this repository found it already."""
        entry = self.learners.get(learner)
        if entry is None or sha not in entry["first"]:
            return None
        first = entry["first"][sha]
        return parse(entry["runs"][first - 1]) if first > 0 else None

    def first_seen(self, learner: str, sha: str) -> datetime | None:
        entry = self.learners.get(learner)
        if entry is None or sha not in entry["first"]:
            return None
        return parse(entry["runs"][entry["first"][sha]])

    def save(self) -> None:
        """Written whole or not at all."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        replace_whole(self.path, json.dumps({"version": VERSION, "learners": self.learners},
                                            indent=1, sort_keys=True) + "\n")


def _well_formed(entry: Any) -> bool:
    if not (isinstance(entry, dict) and isinstance(entry.get("url"), str)
            and isinstance(entry.get("runs"), list) and isinstance(entry.get("first"), dict)):
        return False
    runs = entry["runs"]
    try:
        [parse(r) for r in runs]
    except (TypeError, ValueError, AttributeError):
        return False
    return all(isinstance(k, str) and isinstance(v, int) and 0 <= v < len(runs)
               for k, v in entry["first"].items())
