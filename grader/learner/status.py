"""The learner's status: what the last grade of each exact file (and of the
earlier solutions it uses) said.

Kept in `.gpt-kata/status.json`; `list`, `talk`, `hint` and `watch` read it. Per
problem it also keeps the fix for the mistake its last grade named, and how many
hints the learner has asked for, so `gpt-kata hint` can go one step further each time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader import paths
from grader.grading.values.failures import said_of
from grader.locale import localised, tr, translated
from grader.registry import Problem, problems
from grader.reuse import earlier_files

if TYPE_CHECKING:
    from grader.reports.report import ProblemSummary, Report
    from grader.sandbox.host.pool import WorkerPool


def solution_hash(path: Path) -> str | None:
    """The file's sha256; with the earlier solutions it takes with solution_of(...),
    of all of them, so that saving one of those makes this file "not graded" again."""
    try:
        digest = hashlib.sha256(path.read_bytes())
        for earlier in earlier_files(path):
            digest.update(f"\0{earlier.parent.name}\0".encode())
            digest.update(earlier.read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


def load_status() -> dict:
    path = paths.STATE / "status.json"
    try:
        raw = path.read_bytes()
    except OSError:
        return {}  # never graded here (or unreadable: nothing to remember)
    try:
        status = json.loads(raw.decode("utf-8"))
    except ValueError:
        status = None
    if isinstance(status, dict):
        return status
    put_aside(path)
    return {}


def put_aside(path: Path) -> None:
    """A status file that cannot be read is kept for its owner under another name,
    and said so once, instead of being silently forgotten at the next save."""
    backup = path.with_name(f"{path.name}.{time.strftime('%Y-%m-%dT%H-%M-%S')}.corrupt")
    try:
        path.replace(backup)
        where = tr("kept it as {backup}", backup=backup)
    except OSError:
        where = tr("left it where it is")
    if path not in _reported:
        _reported.add(path)
        print("gpt-kata: " + tr("{path} could not be read, so every problem counts as not "
                                "graded; {where}", path=path, where=where), file=sys.stderr)


_reported: set[Path] = set()


def save_status(updates: dict[str, dict]) -> None:
    """Written to a file of its own and moved into place, so that a write cut short
    (a full disk, a kill, a power cut) leaves the previous status, never half of one."""
    status = {**load_status(), **updates}
    tmp = None
    try:
        paths.STATE.mkdir(exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=paths.STATE,
                                         prefix=".status-", suffix=".tmp",
                                         delete=False) as handle:
            tmp = Path(handle.name)
            handle.write(json.dumps(status, indent=1) + "\n")
        os.replace(tmp, paths.STATE / "status.json")
    except OSError:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        # a read-only checkout still grades; it just cannot remember


def learner_status(problem: Problem) -> str:
    """pass / fail from the last grade of this exact file, else todo or not graded."""
    current = solution_hash(problem.starter)
    if current is None:
        return "missing"
    recorded = load_status().get(problem.slug, {})
    if recorded.get("sha256") == current:
        return "todo" if recorded.get("starter") else recorded.get("status", "not graded")
    return "not graded"


def record(report: Report) -> None:
    """Remember a grade of the learner's own files."""
    known = load_status()
    save_status({s.problem.slug: graded_entry(
        {**known.get(s.problem.slug, {}), "sha256": solution_hash(s.submission)}, s)
        for s in report.summaries})


def graded_entry(entry: dict, summary: ProblemSummary) -> dict:
    """`entry`, a problem's remembered status, after a grade of it said `summary`: the
    CLI's entries are kept in status.json, a notebook's for its session (notebook.py)."""
    entry = {**entry, "status": summary.status, "starter": summary.untouched}
    diagnosed = next((r for r in summary.results if r.status != "pass" and r.hint), None)
    if summary.status == "pass" or diagnosed is None:
        # A fixed mistake's fix is no longer news, and a grade that names no
        # mistake leaves no older one's fix for `hint` to offer as if it were this one's.
        for key in ("mistake", "mistake_id", "mistake_name", "mistake_hint",
                    "mistake_hint_shown"):
            entry.pop(key, None)
        return entry
    if entry.get("mistake_hint") != diagnosed.hint:
        # a new diagnosis: its fix is news, so `hint` offers it first again
        entry["mistake_hint_shown"] = False
    entry["mistake_hint"] = diagnosed.hint
    named = diagnosed.mistake
    entry["mistake"] = named.said if named else diagnosed.name
    entry["mistake_name"] = named.name if named else None
    entry["mistake_id"] = named.id if named else None
    return entry


def earlier_unpassed(report: Report) -> list[str]:
    """A line for each failing problem of the learner's own files that takes an earlier
    solution with solution_of(...) whose file, as it is now, has not passed its own
    grade: a failure there shows here too, as a wrong answer with no mistake of this
    problem's to name (35's Llama takes 29, 33 and 34's parts)."""
    by_folder = {p.folder: p for p in problems()}
    known = load_status()
    lines = []
    for s in report.summaries:
        if s.status == "pass" or not s.submission:
            continue
        behind = []
        for earlier in earlier_files(Path(s.submission)):
            problem = by_folder.get(earlier.parent.name)
            recorded = known.get(problem.slug, {}) if problem else {}
            if problem and not (recorded.get("status") == "pass"
                                and recorded.get("sha256") == solution_hash(earlier)):
                behind.append(problem)
        if behind:
            lines.append(tr("{folder} uses {earlier} through solution_of(...), not passing yet: "
                            "a failure there shows here too (`gpt-kata grade {numbers}`)",
                            folder=s.problem.folder,
                            earlier=", ".join(p.folder for p in behind),
                            numbers=" ".join(str(p.number) for p in behind)))
    return lines


def current_status(problem: Problem, pool: WorkerPool) -> str:
    """The problem's learner_status, its file graded first in `pool`, saying so on
    stderr, if it changed since its last grade (a learners' copy's tools grade it by
    its stored answers: practice_talk.passing)."""
    if learner_status(problem) == "not graded":
        from grader.grading.engine.session import grade_problems

        print(tr("(grading your {folder} first...)", folder=problem.folder), file=sys.stderr)
        record(grade_problems({problem: problem.starter}, pool))
    return learner_status(problem)


def first_unpassed() -> Problem | None:
    """The first problem whose current file has not passed its last grade."""
    return next((p for p in problems() if learner_status(p) != "pass"), None)


def statement_of(problem: Problem) -> Path:
    """The problem's statement, in the language in use where it has one."""
    return localised(problem.statement)


def next_hint(problem: Problem) -> tuple[str, str]:
    """(what it is, the hint) for the next `gpt-kata hint`, and remember it was shown."""
    before = load_status().get(problem.slug, {})
    entry = dict(before)
    shown = hint_after(problem, entry)
    if entry != before:
        save_status({problem.slug: entry})
    return shown


def hint_lines(problem: Problem, shown: tuple[str, str], hints_shown: int,
               again: str = "") -> list[str]:
    """The lines that show a hint (`shown`, from hint_after): a heading that says what
    it is, the hint indented, and, while stronger hints remain after the `hints_shown`
    so far, the command that asks for the next (`again`, with `{slug}` in it; none
    where a key asks, as in `watch`)."""
    what, text = shown
    lines = [tr("{folder}, {what}:", folder=problem.folder, what=what)]
    lines += [f"  {line}" for line in text.splitlines()]
    if again and hints_shown < len(problem.hints):
        lines.append(tr("(`{command}` again for a stronger hint)",
                        command=again.format(slug=problem.slug)))
    return lines


def hint_after(problem: Problem, entry: dict) -> tuple[str, str]:
    """(what it is, the hint) that follows those `entry` has shown, noted in `entry`.

    First the fix for the mistake the last grade named, if not shown yet; then
    the problem's hints in order, from a nudge to the answer, which then repeats.
    """
    fix = entry.get("mistake_hint")
    if fix and not entry.get("mistake_hint_shown"):
        entry["mistake_hint_shown"] = True
        name = entry.get("mistake_name")
        # said in the language in use, whichever the grade spoke
        said = (said_of(translated(name)) if name
                else entry.get("mistake") or tr("your last grade named a mistake."))
        return (tr("the fix for the mistake your last grade named"),
                tr("{said}\nFix: {fix}", said=said, fix=translated(fix)))
    if not problem.hints:
        return tr("no hints"), tr("{folder} has no hints; read {statement}",
                                  folder=problem.folder, statement=statement_of(problem))
    shown = min(int(entry.get("hints_shown", 0)), len(problem.hints) - 1)
    entry["hints_shown"] = shown + 1
    last = shown == len(problem.hints) - 1 and problem.last_hint_answers
    what = (tr("hint {n} of {total} (the answer)", n=shown + 1, total=len(problem.hints))
            if last else tr("hint {n} of {total}", n=shown + 1, total=len(problem.hints)))
    return what, translated(problem.hints[shown])
