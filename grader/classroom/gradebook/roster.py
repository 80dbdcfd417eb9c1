"""Reading a roster folder: one learner per folder or zip, and each learner's
solution files, read as data.

A learner's files are only read here, never imported or run: each is taken if it is
a regular file of sane size inside the learner's folder (a link may not lead out of
it, to the references, say), and graded later from a private staging folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from grader import paths
from grader.classroom.gradebook import layouts
from grader.grading.values.sanitise import folder_name
from grader.learner.errors import UsageError
from grader.locale import tr
from grader.paths import MAX_SOLUTION_BYTES
from grader.registry import Problem
from grader.registry import problems as all_problems


@dataclass
class Learner:
    name: str
    folder: Path  # where their NN-slug/solution.py files are
    files: dict[str, bytes | None]  # problem folder -> the file's bytes, None if not taken
    # The learner's solutions to the problems not graded now: staged beside the graded
    # ones, only so that a solution can use an earlier one (grader.reuse.solution_of).
    others: dict[str, bytes] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # why a file was not taken
    notes: list[str] = field(default_factory=list)  # how their kata was found


def read_solution(path: Path, inside: Path) -> tuple[bytes | None, str]:
    """The file's bytes, or None and why not: links may not lead out of the learner's
    folder (to the references, say), and only regular files of sane size count."""
    why = paths.leads_out(path, inside)
    if why:
        left_out = not path.is_symlink() and not path.exists() and layouts.why_left_out(path)
        return None, left_out or why
    real = path.resolve()
    try:
        with real.open("rb") as handle:
            content = handle.read(MAX_SOLUTION_BYTES + 1)
    except OSError as exc:
        return None, tr("unreadable ({error})", error=exc.strerror)
    if len(content) > MAX_SOLUTION_BYTES:
        return None, tr("larger than {limit} bytes", limit=MAX_SOLUTION_BYTES)
    return content, ""


def collect(name: str, root: Path, chosen: list[Problem]) -> Learner:
    # Where the kata is in their folder or zip (grader/classroom/gradebook/layouts.py); a zip is
    # unpacked only while its solutions are read.
    with layouts.opened(root, [p.folder for p in chosen]) as found:
        inside, folder = found.inside, found.folder
        # Nothing found: the report and the table say what was looked for.
        notes = [*found.notes, *([found.looked_for] if found.looked_for else [])]
        learner = Learner(name, Path(found.shown), {}, notes=notes)
        for p in chosen:
            content, reason = read_solution(folder / p.folder / "solution.py", inside)
            learner.files[p.folder] = content
            if content is None:
                learner.reasons[p.folder] = found.looked_for or reason
        for p in all_problems():
            if p.folder not in learner.files:
                content, _reason = read_solution(folder / p.folder / "solution.py", inside)
                if content is not None:
                    learner.others[p.folder] = content
    return learner


def not_hand_ins(roster: Path, out: Path) -> list[str]:
    """The roster's entries that are no learner's (a .tar.gz, a loose .py), as safe
    names: the instructor is told of them instead of finding a learner missing."""
    out = out.resolve()
    try:
        return sorted(folder_name(e.name) for e in roster.iterdir()
                      if not e.name.startswith(".") and not layouts.is_hand_in(e)
                      and e.resolve() != out)
    except OSError:
        return []


def hidden_hand_ins(roster: Path) -> list[str]:
    """The roster's entries that would be learners but for the dot that begins their
    name, which hides them (`.ada/` holding problems, `.ada.zip`), as safe names: no
    learner goes missing unsaid, and a tool's folder (.git, .github) is not named."""
    def looks_handed_in(entry: Path) -> bool:
        if entry.is_dir():
            return layouts.has_problems(entry) or layouts.has_problems(entry / "problems")
        return layouts.is_zip(entry)
    try:
        return sorted(folder_name(e.name) for e in roster.iterdir()
                      if e.name.startswith(".") and not e.is_symlink() and looks_handed_in(e))
    except OSError:
        return []


def roster_folders(roster: Path, out: Path) -> dict[str, Path]:
    if not roster.is_dir():
        raise UsageError(tr("{roster}: no such folder (ROSTER holds one folder per learner)",
                            roster=roster))
    out = out.resolve()
    # Each learner is known by their folder's name made safe (grading/values/sanitise.py):
    # one line, any bytes that are not UTF-8 kept as \xNN, so no two folders share one.
    # A zip file is a learner too, known by its name without .zip (layouts.py).
    # Folders claim their names first, then zips, each in the order of their names: the
    # same names on every machine, whatever order the folder lists them in.
    entries = sorted((e for e in roster.iterdir() if layouts.is_hand_in(e) and e.resolve() != out),
                     key=lambda e: (not e.is_dir(), e.name))
    found: dict[str, Path] = {}
    for entry in entries:
        found[layouts.learner_name(entry, set(found))] = entry
    if not found:
        raise UsageError(tr("{roster} holds no learner folders", roster=roster))
    return dict(sorted(found.items()))
