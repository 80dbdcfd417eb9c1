"""Knowing what is already graded: a learner whose files, grader and options are
unchanged since the last run keeps their report, and is not graded again.

DIR/.gradebook-state.json maps each learner to the key of what was graded.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from grader import paths
from grader.cli.gradebook.roster import Learner

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
    tmp = out / f"{STATE_FILE}.tmp"
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(out / STATE_FILE)
