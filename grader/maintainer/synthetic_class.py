"""A synthetic class of 20 learners, for the gradebook's tests and benchmark.

`make_roster(folder)` writes one folder per learner and returns what each must
get on crop-context and decode: pass, fail or missing. The class holds every
kind of learner an instructor meets: complete, partial, untouched, syntax
errors, missing folders, an endless loop, hostile code, and a whole clone whose
grader/ was edited to cheat.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grader import paths

PROBLEMS = ("crop-context", "decode")
CROP, DECODE = "01-crop-context", "05-decode"

HANG = """class Solution:
    def crop_context(self, context, context_length):
        while True:
            pass
"""
READS_REFERENCE = """from grader import paths


class Solution:
    def crop_context(self, context, context_length):
        # Copies the reference's answer: the sandbox must refuse the read.
        reference = (paths.SOLUTIONS / "01-crop-context" / "solution.py").read_text()
        scope = {}
        exec(reference, scope)
        return scope["Solution"]().crop_context(context, context_length)
"""
OFF_BY_ONE = """class Solution:
    def crop_context(self, context, context_length):
        return context[:, -context_length - 1:]
"""
SYNTAX_ERROR = "class Solution:\n    def decode(self, ids, int_to_char:\n"


def _put(root: Path, folder: str, text: str) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / "solution.py").write_text(text, encoding="utf-8")


def make_roster(roster: Path, marker: Path) -> dict[str, dict[str, str]]:
    """Write the class into `roster`; each learner's expected cells.

    A clone's edited grader/ would write `marker` if anything ran it.
    """
    crop = (paths.SOLUTIONS / CROP / "solution.py").read_text(encoding="utf-8")
    decode = (paths.SOLUTIONS / DECODE / "solution.py").read_text(encoding="utf-8")
    crop_starter = (paths.STARTERS / CROP / "solution.py").read_text(encoding="utf-8")
    decode_starter = (paths.STARTERS / DECODE / "solution.py").read_text(encoding="utf-8")
    expected: dict[str, dict[str, str]] = {}

    def learner(name: str, crop_text: str | None, decode_text: str | None,
                cells: tuple[str, str], clone: bool = False) -> None:
        root = roster / name / "problems" if clone else roster / name
        root.mkdir(parents=True, exist_ok=True)
        if crop_text is not None:
            _put(root, CROP, crop_text)
        if decode_text is not None:
            _put(root, DECODE, decode_text)
        expected[name] = dict(zip(PROBLEMS, cells, strict=True))

    for i in range(6):
        learner(f"complete-{i}", crop, decode, ("pass", "pass"))
    for i in range(2):
        learner(f"partial-crop-{i}", crop, decode_starter, ("pass", "fail"))
        learner(f"partial-decode-{i}", None, decode, ("missing", "pass"))
    for i in range(3):
        learner(f"untouched-{i}", crop_starter, decode_starter, ("fail", "fail"))
    learner("syntax-error", crop, SYNTAX_ERROR, ("pass", "fail"))
    learner("syntax-error-too", SYNTAX_ERROR, decode, ("fail", "pass"))
    learner("off-by-one", OFF_BY_ONE, decode, ("fail", "pass"))
    learner("no-folders", None, None, ("missing", "missing"))
    learner("endless-loop", HANG, decode, ("fail", "pass"))
    learner("reads-references", READS_REFERENCE, decode, ("fail", "pass"))
    learner("clone-with-a-cheating-grader", OFF_BY_ONE, decode, ("fail", "pass"), clone=True)
    grader = roster / "clone-with-a-cheating-grader" / "grader"
    grader.mkdir()
    cheat = f"open({str(marker)!r}, 'w').write('ran')\n"
    for name in ("__init__.py", "__main__.py"):
        (grader / name).write_text(cheat, encoding="utf-8")
    shutil.copy(paths.REGISTRY, roster / "clone-with-a-cheating-grader" / "problems")
    return expected
