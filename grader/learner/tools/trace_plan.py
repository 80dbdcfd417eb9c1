"""What `gpt-kata trace` traces: one fixed case of a problem, for one file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.locale import tr
from grader.registry import Problem


@dataclass
class Plan:
    """What to trace: whose file, which method, with the arguments of one fixed case."""

    problem: Problem
    method: str
    iterate: bool
    submission: Path
    names: tuple[str, ...]
    args: dict[str, Any]
    case_id: str
    changed: tuple[str, ...] = ()  # the case's arguments replaced from the command line
    picked: bool = False  # the case was named with --case
    number: int = 1  # its place among the problem's fixed cases, from 1
    total: int = 1  # how many fixed cases the problem has


def joined(names: tuple[str, ...]) -> str:
    """The arguments a trace changed, as one phrase: "prompt and new_chars and seed"."""
    said = names[0] if names else ""
    for name in names[1:]:
        said = tr("{names} and {name}", names=said, name=name)
    return said
