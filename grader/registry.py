"""The problem registry, `problems/registry.toml`: the one list of problems."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.paths import CHECKS, PROBLEMS, REGISTRY, SOLUTIONS


@dataclass(frozen=True)
class Problem:
    number: int
    slug: str
    title: str
    track: str
    methods: tuple[str, ...]
    hint: str

    @property
    def folder(self) -> str:
        return f"{self.number:02d}-{self.slug}"

    @property
    def starter(self) -> Path:
        return PROBLEMS / self.folder / "solution.py"

    @property
    def statement(self) -> Path:
        return PROBLEMS / self.folder / "README.md"

    @property
    def reference(self) -> Path:
        return SOLUTIONS / self.folder / "solution.py"

    @property
    def checks(self) -> Path:
        return CHECKS / f"check_{self.slug.replace('-', '_')}.py"


@cache
def problems() -> tuple[Problem, ...]:
    raw = tomllib.loads(REGISTRY.read_text(encoding="utf-8"))
    return tuple(
        Problem(
            number=i,
            slug=entry["slug"],
            title=entry["title"],
            track=entry["track"],
            methods=tuple(entry["methods"]),
            hint=entry.get("hint", ""),
        )
        for i, entry in enumerate(raw["problem"], start=1)
    )


def find(name: str) -> Problem:
    """A problem by slug, folder name or number ("generate", "06-generate", "6")."""
    for problem in problems():
        if name in (problem.slug, problem.folder, str(problem.number), f"{problem.number:02d}"):
            return problem
    known = ", ".join(p.slug for p in problems())
    raise LookupError(f"no problem called {name!r}; the problems are: {known}")
