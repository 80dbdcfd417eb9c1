"""The problem registry, `problems/registry.toml`: the one list of problems."""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.locale import tr
from grader.paths import CHECKS, PROBLEMS, REGISTRY, SOLUTIONS, STARTERS
from grader.wording import one_of

# A problem's points when the registry sets none (`points = 10` in its entry).
DEFAULT_POINTS = 10


@dataclass(frozen=True)
class Problem:
    number: int
    slug: str
    title: str
    track: str
    methods: tuple[str, ...]
    hints: tuple[str, ...]  # from a gentle nudge to the answer
    # The torch.nn.Module class the learner writes, for a problem graded by
    # loading known weights into it (grader/model/parts.py); None for a Solution.
    module: str | None = None
    # What the problem is worth; each of its checks earns an equal share of it.
    points: int = DEFAULT_POINTS
    # Whether its checks hand the learner's code one of the grader's models (the
    # shipped GPT, say, or a GPT to train): only then does its worker hold their code.
    takes_model: bool = False
    # Whether its checks build a torch optimizer in the worker (a training harness):
    # the fork server then imports what that needs once, before forking its worker.
    trains: bool = False
    # Whether the last hint is the answer: not in a graded class's copy, which leaves
    # that hint out (grader/release/answers.py).
    last_hint_answers: bool = True

    @property
    def class_name(self) -> str:
        """The class the learner's file must define: the module, or Solution."""
        return self.module or "Solution"

    @property
    def hint(self) -> str:
        """The last and most direct hint: the answer."""
        return self.hints[-1] if self.hints else ""

    @property
    def folder(self) -> str:
        return f"{self.number:02d}-{self.slug}"

    @property
    def starter(self) -> Path:
        return PROBLEMS / self.folder / "solution.py"

    def is_its_starter(self, file: Path) -> bool:
        """Whether `file` is this problem's shipped starter, byte for byte: its grade
        takes milliseconds, its first call saying it is not implemented."""
        try:
            return file.read_bytes() == (STARTERS / self.folder / "solution.py").read_bytes()
        except OSError:
            return False

    @property
    def statement(self) -> Path:
        return PROBLEMS / self.folder / "README.md"

    @property
    def reference(self) -> Path:
        return SOLUTIONS / self.folder / "solution.py"

    @property
    def grading_folder(self) -> Path:
        """Its grading files' one folder, grader/checks/<slug with _ for ->: its check
        module, its known mistakes (mistakes.toml) and any helper only its checks use."""
        return CHECKS / self.slug.replace("-", "_")

    @property
    def checks(self) -> Path:
        return self.grading_folder / f"check_{self.grading_folder.name}.py"

    @property
    def mistakes(self) -> Path:
        return self.grading_folder / "mistakes.toml"

    @property
    def checks_module(self) -> str:
        """The check module's dotted name, for importing it outside a grade."""
        return f"grader.checks.{self.grading_folder.name}.{self.checks.stem}"


@cache
def problems() -> tuple[Problem, ...]:
    raw = tomllib.loads(REGISTRY.read_text(encoding="utf-8"))
    answered = bool(raw.get("last_hint_is_the_answer", True))
    return tuple(
        Problem(
            number=i,
            slug=entry["slug"],
            title=entry["title"],
            track=entry["track"],
            methods=tuple(entry["methods"]),
            hints=tuple(entry.get("hints", [entry["hint"]] if "hint" in entry else [])),
            module=entry.get("module"),
            points=int(entry.get("points", DEFAULT_POINTS)),
            takes_model=bool(entry.get("takes_model", False)),
            trains=bool(entry.get("trains", False)),
            last_hint_answers=answered,
        )
        for i, entry in enumerate(raw["problem"], start=1)
    )


def name_key(name: str) -> str:
    """A problem's name as `find` reads it: the last part of a path (its folder, for a
    file), any case, _ for -."""
    key = name.strip().replace("\\", "/").rstrip("/")
    if key.endswith((".py", ".md")):
        key = key.rsplit("/", 1)[0] if "/" in key else ""
    return key.rsplit("/", 1)[-1].lower().replace("_", "-")


def find(name: str) -> Problem:
    """A problem by slug, folder, number or path ("generate", "06-generate", "6",
    "problems/06-generate/", "problems/06-generate/solution.py")."""
    key = name_key(name)
    for problem in problems():
        if key in (problem.slug, problem.folder, str(problem.number), f"{problem.number:02d}"):
            return problem
    names = [p.slug for p in problems()] + [p.folder for p in problems()]
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    if close:
        # a folder name and its slug both match: suggest each problem once
        suggested = list(dict.fromkeys(c.split("-", 1)[1] if c[:2].isdigit() else c
                                       for c in close))
        raise LookupError(tr("no problem called {name!r}; did you mean {slugs}?", name=name,
                             slugs=one_of(suggested)))
    known = ", ".join(p.slug for p in problems())
    raise LookupError(tr("no problem called {name!r}; the problems are: {known}", name=name,
                         known=known))
