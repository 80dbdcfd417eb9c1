"""What the gradebook writes for each learner and for the class: a learner's row and
reports (JSON, JUnit), the report of a learner it could not grade, a report's file
name, gradebook.csv, and the table shown at the end.

A roster of repositories (repositories.py) writes the same files through these.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from grader import wording
from grader.grading.values.sanitise import cell, visible
from grader.locale import tr
from grader.registry import Problem
from grader.reports.late import describe
from grader.reports.scoring import format_points, score_report

if TYPE_CHECKING:
    from rich.console import Console

COLUMNS = ["learner", "problems_passed", "problems_total", "score", "max_score"]
# After the problems, for a class graded from repositories (repositories.py): the
# commit graded, how late it was, and the points its late penalty took.
REPOSITORY_COLUMNS = ["commit", "late_minutes", "late_penalty"]
# Last: what the row's reader should know (why it was not graded, how late it was,
# how the hand-in was read), as the table printed at the end says it.
NOTE = "note"
# Every column that may follow the problems, in a table of this grader or an older one.
TRAILING = (*REPOSITORY_COLUMNS, NOTE)


def failed_report(message: str, chosen: Sequence[Problem] = ()) -> dict:
    """The shape `grade --json` writes, for a learner the grader could not grade: each
    problem of `chosen` an error worth its full points, so that the learner is scored
    out of the same total as the class, 0 of it."""
    from grader.reports.provenance import provenance

    problems = [{"problem": p.slug, "number": p.number, "status": "error", "passed": 0,
                 "total": 0, "max_score": p.points, "submission": None} for p in chosen]
    return score_report({"version": 3, "status": "error", "message": visible(message),
                         "score": 0, "max_score": 0, "problems": problems,
                         "mode": "classroom", "provenance": provenance({}, [], "classroom"),
                         "tests": []})


def not_graded(report: dict) -> bool:
    """Whether a report is of a learner the grader could not grade at all."""
    return report.get("status") == "error" and not any(
        isinstance(p, dict) and p.get("total") for p in report.get("problems") or [])


def replace_whole(path: Path, text: str, newline: str | None = None) -> None:
    """`text` written to a file of its own and moved into place: a write cut short (a
    full disk) leaves the previous file, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", newline=newline, encoding="utf-8") as handle:
            handle.write(text)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def write_csv(path: Path, header: list[str], lines: list[list[str]]) -> None:
    """The table written whole (replace_whole): never half of a gradebook.csv."""
    table = io.StringIO()
    writer = csv.writer(table)
    writer.writerow(header)
    writer.writerows(lines)
    replace_whole(path, table.getvalue(), newline="")


# Names Windows keeps for its devices, whatever follows a dot (`con.json` is the
# console there): no file or folder of such a name can be made.
WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"} | {
    f"{kind}{digit}" for kind in ("COM", "LPT") for digit in "123456789\u00b9\u00b2\u00b3"})


def _encoded(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode())


def report_stem(name: str) -> str:
    """The file name (without suffix) of a learner's reports: their safe name, with the
    characters that artifact uploads and other systems refuse percent-encoded (and
    % itself, so no two names meet), shortened with a hash if very long. The hash
    follows `%~`, which no encoded name holds (its % are all %XX): no short name can
    be a long one's shortened form. A name Windows would not make (a device's, like
    `con`, or one ending in a dot or a space, which it drops) has its first or last
    character encoded too, as has a leading dot: it is also a hand-in folder's name
    (roster_csv.Entry.folder)."""
    stem = re.sub(r'[%\\/:<>|*?"]', lambda m: f"%{ord(m.group()):02X}", name)
    if stem.partition(".")[0].rstrip(" ").upper() in WINDOWS_DEVICES:
        stem = _encoded(stem[0]) + stem[1:]
    if stem.endswith((".", " ")):
        stem = stem[:-1] + _encoded(stem[-1])
    if stem.startswith("."):  # a hidden file, which artifact uploads leave out
        stem = _encoded(".") + stem[1:]
    if len(stem.encode()) > 180:  # file names hold 255 bytes, and suffixes follow
        short = stem.encode()[:100].decode("utf-8", errors="ignore")
        stem = short + "%~" + hashlib.sha256(name.encode()).hexdigest()[:16]
    return stem


def shared_report_files(names: Iterable[str]) -> list[list[str]]:
    """The learners whose reports would be one file on a disk that ignores case or
    composes accents (macOS, Windows, a downloaded artifact): a report kept from an
    earlier run would then be read as another learner's."""
    by_file: dict[str, list[str]] = {}
    for name in names:
        key = unicodedata.normalize("NFC", report_stem(name)).casefold()
        by_file.setdefault(key, []).append(name)
    return [group for group in by_file.values() if len(group) > 1]


@dataclass
class Row:
    learner: str
    cells: dict[str, str]  # problem slug -> pass, fail, missing (error: not graded)
    score: float = 0  # points, from reports/scoring.py
    max_score: float = 0
    skipped: bool = False
    error: str = ""
    notes: list[str] = field(default_factory=list)  # how their hand-in was read
    commit: str = ""  # the commit graded, for a class of repositories
    late_minutes: int | None = None
    late: str = ""  # how late, and what the penalty took, in words
    late_points: int = 0

    @property
    def passed(self) -> int:
        return sum(c == "pass" for c in self.cells.values())


def row_from_report(name: str, report: dict, chosen: list[Problem]) -> Row:
    statuses = {p.get("problem"): p.get("status") for p in report.get("problems", [])}
    cells = {}
    for p in chosen:
        status = statuses.get(p.slug)
        cells[p.slug] = ("pass" if status == "pass" else "missing" if status == "missing"
                         else "error" if status is None else "fail")
    row = Row(name, cells, float(report.get("score") or 0), float(report.get("max_score") or 0))
    source = report.get("source") if isinstance(report.get("source"), dict) else {}
    # Which commit was graded and why (one dated before the deadline that a run at the
    # deadline did not see, later commits passed over) first, then how it was read;
    # once each, since "nothing handed in" is both.
    said = [*(source.get("notes") or []), *(report.get("notes") or [])]
    row.notes = list(dict.fromkeys(visible(n) for n in said if isinstance(n, str)))
    commit, minutes = source.get("commit"), source.get("late_minutes")
    row.commit = commit if isinstance(commit, str) and re.fullmatch("[0-9a-f]{40}", commit) else ""
    row.late_minutes = minutes if isinstance(minutes, int) and minutes >= 0 else None
    late = report.get("late")
    if isinstance(late, dict) and isinstance(late.get("points"), int):
        row.late_points = late["points"]
    row.late = visible(describe(late if isinstance(late, dict) else None))
    return row


def with_hand_in(report: dict, hand_in: dict | None) -> dict:
    """The report with where its hand-in came from (`source`) and the late penalty it
    incurs (`late`), both replaced whole, so that a report kept from an earlier run
    says what this run found; its score made again from them (reports/scoring.py)."""
    if hand_in is None:
        return report
    report["source"] = hand_in["source"]
    report.pop("late", None)
    if hand_in.get("late") and not not_graded(report):
        report["late"] = dict(hand_in["late"])
    return score_report(report)


def hand_in_of(args: object, name: str) -> dict | None:
    """What the fetch of a class's repositories found for `name`, if it was fetched."""
    return (getattr(args, "hand_ins", None) or {}).get(name)


def with_repositories(args: object) -> bool:
    """Whether the class was graded from repositories: its table then has their columns."""
    return getattr(args, "hand_ins", None) is not None


def header(chosen: list[Problem], repositories: bool) -> list[str]:
    return [*COLUMNS, *(p.slug for p in chosen), *(REPOSITORY_COLUMNS if repositories else []),
            NOTE]


def trailing(header: list[str]) -> list[str]:
    """The columns after the problems in a gradebook.csv's `header`."""
    count = 0
    while count < len(header) - len(COLUMNS) and header[-1 - count] in TRAILING:
        count += 1
    return header[len(header) - count:]


def note(row: Row, shown: bool = False) -> str:
    """The row's note: why it was not graded, or how late and how it was read; in the
    table `shown` at the end, whether it was graded again instead of how it was read
    (a file keeps what stays true from one run to the next)."""
    if row.error:
        return tr("not graded: {why}", why=row.error)
    said = [row.late] if row.late else []
    said += [tr("unchanged, not regraded")] if shown and row.skipped else row.notes
    return "; ".join(said)


def csv_lines(rows: list[Row], chosen: list[Problem],
              repositories: bool = False) -> list[list[str]]:
    # A learner's name is theirs to choose: a spreadsheet must show it, not run it.
    return [[cell(row.learner), str(row.passed), str(len(chosen)), format_points(row.score),
             format_points(row.max_score), *(row.cells[p.slug] for p in chosen),
             *([row.commit, "" if row.late_minutes is None else str(row.late_minutes),
                "" if row.error else str(row.late_points)] if repositories else []),
             cell(visible(note(row)))]
            for row in rows]


def write_report(out: Path, name: str, report: dict, junit: bool) -> None:
    stem = report_stem(name)
    replace_whole(out / f"{stem}.json", json.dumps(report, indent=2) + "\n")
    if junit:
        from grader.reports.junit import write_junit

        write_junit(report, out / f"{stem}.junit.xml", suite=f"gpt-kata: {name}")
    else:
        # An earlier run's JUnit report no longer says this grade: a later --junit run
        # that keeps this report would have kept it too.
        (out / f"{stem}.junit.xml").unlink(missing_ok=True)


def record_learner(out: Path, name: str, report: dict, chosen: list[Problem],
                   junit: bool, hand_in: dict | None = None) -> Row:
    """The learner's row, their reports written; a report that cannot be written (a
    full disk, say) makes the row an error with the reason, and the class goes on.
    `hand_in`: what the fetch of their repository found (`source`, `late`)."""
    report = with_hand_in(report, hand_in)
    row = row_from_report(name, report, chosen)
    if not_graded(report):
        row.error = visible(report.get("message") or tr("not graded"))
    try:
        write_report(out, name, report, junit)
    except OSError as exc:
        row.error = tr("their report could not be written: {error}", error=visible(exc))
        try:  # at least the reason, in place of a report from an earlier run
            write_report(out, name, with_hand_in(failed_report(row.error, chosen), hand_in),
                         junit)
        except OSError:
            pass  # the row says why
    if row.error:
        # Nothing earned, out of the class's total: a sum over the class stays right.
        row.cells = dict.fromkeys(row.cells, "error")
        row.score, row.max_score = 0, sum(p.points for p in chosen)
    return row


def show_table(console: Console, ordered: list[Row], chosen: list[Problem], out: Path) -> None:
    from rich.markup import escape
    from rich.table import Table

    caption = tr("{learners}, {problems}", learners=wording.learners(len(ordered)),
                 problems=wording.problems(len(chosen)))
    kept = sum(row.skipped for row in ordered)
    if kept:  # a rerun: how many were graded this time, without reading every row
        caption += tr(": {graded} graded, {kept} unchanged since the last run",
                      graded=len(ordered) - kept, kept=kept)
    table = Table(caption=caption)
    for column in (tr("learner"), tr("problems"), tr("score"), tr("note")):
        table.add_column(column)
    for row in ordered:
        said = escape(visible(note(row, shown=True)))
        shown = f"[red]{said}[/]" if row.error else f"[dim]{said}[/]"
        table.add_row(escape(row.learner), f"{row.passed}/{len(chosen)}",
                      f"{format_points(row.score)}/{format_points(row.max_score)}", shown)
    console.print(table)
    console.print(tr("wrote {table} and one report per learner in {out}",
                     table=escape(str(out / "gradebook.csv")), out=escape(str(out))))
