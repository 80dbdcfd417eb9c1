"""Knowing what is already graded: a learner whose files, grader, options, examples
seed, torch and hypothesis, and sandbox are unchanged since the last run keeps their
report, and is not graded again. A report made under a weaker grade (without the
sandbox, or under other drawn examples) is never kept in place of a stronger one.

DIR/.gradebook-state.json maps each learner to the key of what was graded.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from grader import paths
from grader.classroom.gradebook.outputs import replace_whole
from grader.classroom.gradebook.roster import Learner

STATE_FILE = ".gradebook-state.json"


def grader_fingerprint() -> str:
    """Changes whenever the grader, its checks, references or data change."""
    digest = hashlib.sha256()
    files = [*sorted(paths.PACKAGE.rglob("*.py")), paths.REGISTRY,
             *sorted(paths.SOLUTIONS.glob("*/solution.py")), *sorted(paths.DATA.glob("*.*"))]
    for path in files:
        digest.update(str(path.relative_to(path.anchor)).encode())
        try:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            digest.update(b"unreadable")
    return digest.hexdigest()


def seed_digest() -> str | None:
    """A digest of the instructor's examples seed, which changes the drawn examples, or
    None without one. Never the seed: the state file sits beside the reports."""
    from grader.grading.subject.examples_seed import SEED_VARIABLE

    seed = os.environ.get(SEED_VARIABLE, "")
    if not seed:
        return None
    return hashlib.sha256(b"gpt-kata examples seed\0" + seed.encode()).hexdigest()


def library_versions() -> dict[str, str]:
    """The versions of what a grade's outcome rests on besides the grader: torch runs
    the references the answers are judged against, and hypothesis draws the examples
    (its version may draw others from the same seed)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("torch", "hypothesis"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "absent"
    return found


def sandbox_offered() -> dict[str, Any]:
    """The sandbox's layers this machine offers the grades, and whether they run as
    root: a report graded where fewer were offered is graded again."""
    from grader.sandbox.worker.machine import probe

    offered = dataclasses.asdict(probe())
    offered["launcher"] = bool(offered["launcher"])  # its path may move; not its presence
    offered["root"] = hasattr(os, "geteuid") and os.geteuid() == 0
    return offered


def as_strong(report: dict, unisolated_allowed: bool) -> bool:
    """Whether a kept report was graded as a classroom grade, in the sandbox unless the
    instructor allows grading without it."""
    isolation = report.get("isolation")
    if report.get("mode") != "classroom" or not isinstance(isolation, list):
        return False
    sandboxed = bool(isolation) and not any(
        isinstance(layer, str) and layer.startswith("unisolated") for layer in isolation)
    return sandboxed or unisolated_allowed


def inputs_key(learner: Learner, grader: str, options: dict) -> str:
    files = {folder: hashlib.sha256(content).hexdigest() if content is not None else None
             for folder, content in learner.files.items()}
    # An earlier solution that a graded one uses changes its grade too.
    files.update({folder: hashlib.sha256(content).hexdigest()
                  for folder, content in learner.others.items()})
    material = {"grader": grader, "options": options, "files": files}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def load_state(out: Path) -> dict[str, str]:
    try:
        state = json.loads((out / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def save_state(out: Path, state: dict[str, str]) -> None:
    replace_whole(out / STATE_FILE, json.dumps(state, indent=1, sort_keys=True) + "\n")
