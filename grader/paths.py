"""Where the project's files live. Importing this is cheap: no torch.

Two kinds of files, found in two places:

* the grader's own: the registry, the reference solutions, the checks, the model
  and its data, the starter snapshot. In a checkout of the repository they are its
  top-level folders; an installed package carries copies under ``grader/_kata``
  (see ``[tool.setuptools]`` in pyproject.toml). ``ROOT`` is whichever holds them.
* the learner's: ``problems/NN-slug/solution.py`` and the ``.gpt-kata`` status,
  found from the working directory, so that one installed grader serves any kata
  folder and never grades the copies it ships.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from grader.locale import tr

PACKAGE = Path(__file__).resolve().parent
_SHIPPED = PACKAGE / "_kata"
# An installed package holds its own copies; a checkout (editable install) has none.
INSTALLED = (_SHIPPED / "problems" / "registry.toml").is_file()
ROOT = _SHIPPED if INSTALLED else PACKAGE.parent

DATA = ROOT / "data"
# Pristine copies of the starters: the tests grade these, never the learner's problems/.
STARTERS = DATA / "starters"
SOLUTIONS = ROOT / "solutions"
CHECKS = PACKAGE / "checks"
REGISTRY = ROOT / "problems" / "registry.toml"

_PROBLEM_FOLDER = re.compile(r"\d\d-[a-z0-9-]+")
# What a learners' copy grades with in place of the checks: its stored answers.
STORED_ANSWERS = "gpt_kata_practice"


def in_a_copy() -> bool:
    """A learners' copy: stored answers, and none of the kata's checks."""
    import importlib.util

    return not CHECKS.is_dir() and importlib.util.find_spec(STORED_ANSWERS) is not None


def is_kata_folder(folder: Path) -> bool:
    """A folder with problems/registry.toml or a problems/NN-slug/solution.py."""
    problems = folder / "problems"
    if (problems / "registry.toml").is_file():
        return True
    try:
        return any(_PROBLEM_FOLDER.fullmatch(entry.name) and (entry / "solution.py").is_file()
                   for entry in problems.iterdir())
    except OSError:
        return False


def find_kata(start: Path) -> Path | None:
    """The nearest kata folder at or above ``start``."""
    for folder in (start, *start.parents):
        if is_kata_folder(folder):
            return folder
    return None


def _learner_root() -> Path:
    try:
        here = Path.cwd()
    except OSError:  # the working directory was removed
        here = None
    found = find_kata(here) if here is not None else None
    if found is not None:
        return found
    if not INSTALLED:
        return ROOT  # a checkout is a kata folder itself, wherever the command runs
    # Outside any kata folder an installed grader finds no solutions here and says so;
    # it never falls back on the copies it ships.
    return here if here is not None else Path(os.sep)


# The learner's kata folder: their solutions and the status of their last grades.
KATA = _learner_root()
PROBLEMS = KATA / "problems"
if not REGISTRY.is_file() and (PROBLEMS / "registry.toml").is_file():
    # A learners' copy installed as a package, not in place: its registry is the kata
    # folder's own.
    REGISTRY = PROBLEMS / "registry.toml"
STATE = KATA / ".gpt-kata"


# A learner's solution is a few kilobytes; a classroom grade takes none larger.
MAX_SOLUTION_BYTES = 1_000_000


def other_case(path: Path, inside: Path) -> str:
    """The name a part of `path` (below `inside`) has where it differs from the one
    asked for in case only, or "": a disk that does not tell case apart (macOS,
    Windows) finds `03-softmax/Solution.py` as `03-softmax/solution.py` and Linux does
    not, and a hand-in must be graded the same on both."""
    try:
        parts = path.relative_to(inside).parts
    except ValueError:
        return ""
    folder = inside
    for part in parts:
        try:
            names = os.listdir(folder)
        except OSError:
            return ""
        if part not in names:
            return next((name for name in names if name.casefold() == part.casefold()), "")
        folder = folder / part
    return ""


def leads_out(path: Path, inside: Path) -> str:
    """Why `path` is not a file of the learner's folder `inside`, or "" if it is: a
    link may not lead out of it (to the references, say), and only a regular file of
    at most MAX_SOLUTION_BYTES counts. A learner's repository may commit links, and a
    clone makes them real. The reason is in the language in use: the gradebook's report
    and a refused grade show it."""
    other = other_case(path, inside)
    if other:
        return tr("no such file ({name} differs in case, which Linux tells apart)",
                  name=other)
    if not path.exists() and not path.is_symlink():
        return tr("no such file")
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return tr("a broken link")
    if not real.is_relative_to(inside.resolve()):
        return tr("a link out of the learner's folder")
    if not real.is_file():
        return tr("not a regular file")
    if real.stat().st_size > MAX_SOLUTION_BYTES:
        return tr("larger than {limit} bytes", limit=MAX_SOLUTION_BYTES)
    return ""
