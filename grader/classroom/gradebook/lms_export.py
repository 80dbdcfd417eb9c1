"""Grade files an LMS imports, made from a finished gradebook.csv.

- Canvas (Grades > Import): a CSV whose header is `Student, ID, SIS User ID,
  SIS Login ID, Section` and then one column per assignment, named as the
  assignment is (`gpt-kata`, or `gpt-kata (1234)` for an existing assignment's
  id), holding points. A row `Points Possible` under the header gives the
  assignment's points, as Canvas's own export has it.
- Moodle (Grade administration > Import > CSV file): a CSV with a column that
  identifies each user (Moodle's form maps a column to its user id, username, ID
  number or email address under "Identify user by") and a column of grades that
  the form maps to a grade item.

Learners are known to the grader by their folder's name; an LMS knows them by its
own ids. `--lms-ids FILE` is a CSV with a `learner` column (the name in
gradebook.csv) and any of `name`, `canvas_id`, `sis_user_id`, `sis_login_id`,
`section`, `username`, `idnumber`, `email`. Without it (or for a learner it does
not list) the folder's name is the Canvas `Student` and the Moodle `Username`,
and every id is left empty: the LMS then matches by that name, or lists the row
as unmatched for the instructor to pick. A learner the grader could not grade
gets an empty grade, never a 0, so that an LMS records no grade for them.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from grader.classroom.gradebook.outputs import trailing, write_csv
from grader.grading.values.sanitise import cell, uncell, visible
from grader.learner.errors import UsageError
from grader.locale import tr
from grader.reports.scoring import format_points

ID_COLUMNS = ("name", "canvas_id", "sis_user_id", "sis_login_id", "section", "username",
              "idnumber", "email")
CANVAS_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Full name", "Username", "ID number", "Email address"]
# gradebook.csv's own columns (outputs.py COLUMNS), before the problems.
FIXED = 5


def read_grades(table: Path) -> list[tuple[str, str, str]]:
    """(learner, score, max_score) per row of gradebook.csv; the score is empty for a
    learner that was not graded (an `error` cell)."""
    with table.open(newline="", encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    grades = []
    # The problems' cells, not the columns after them (a note may say anything).
    end = len(lines[0]) - len(trailing(lines[0])) if lines else FIXED
    for line in lines[1:]:
        if len(line) < FIXED:
            continue
        graded = "error" not in line[FIXED:end]
        grades.append((visible(uncell(line[0])), line[3] if graded else "", line[4]))
    return grades


def read_ids(path: Path) -> dict[str, dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            if "learner" not in (reader.fieldnames or []):
                raise UsageError(tr("--lms-ids {path}: needs a 'learner' column (and any "
                                    "of {columns})", path=path,
                                    columns=", ".join(ID_COLUMNS)))
            return {visible(row["learner"]): {key: visible(row.get(key) or "")
                                              for key in ID_COLUMNS} for row in reader}
    except OSError as exc:
        raise UsageError(f"--lms-ids {path}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise UsageError(tr("--lms-ids {path}: not a CSV file in UTF-8 ({error})", path=path,
                            error=exc)) from None


def canvas(grades: list[tuple[str, str, str]], ids: dict[str, dict[str, str]],
           assignment: str) -> tuple[list[str], list[list[str]]]:
    possible = max((g[2] for g in grades), key=lambda v: float(v or 0), default="0")
    lines = [["Points Possible", "", "", "", "", format_points(possible)]]
    for learner, score, _ in grades:
        known = ids.get(learner, {})
        lines.append([cell(known.get("name") or learner), cell(known.get("canvas_id", "")),
                      cell(known.get("sis_user_id", "")), cell(known.get("sis_login_id", "")),
                      cell(known.get("section", "")), format_points(score) if score else ""])
    return [*CANVAS_COLUMNS, cell(assignment)], lines


def moodle(grades: list[tuple[str, str, str]], ids: dict[str, dict[str, str]],
           assignment: str) -> tuple[list[str], list[list[str]]]:
    lines = []
    for learner, score, _ in grades:
        known = ids.get(learner, {})
        lines.append([cell(known.get("name") or learner), cell(known.get("username") or learner),
                      cell(known.get("idnumber", "")), cell(known.get("email", "")),
                      format_points(score) if score else ""])
    return [*MOODLE_COLUMNS, cell(assignment)], lines


def write_exports(table: Path, canvas_path: str | None, moodle_path: str | None,
                  ids_path: str | None, assignment: str) -> list[Path]:
    """The exports asked for, from `table` (a gradebook.csv); the paths written."""
    if not canvas_path and not moodle_path:
        return []
    grades = read_grades(table)
    ids = read_ids(Path(ids_path)) if ids_path else {}
    written = []
    for target, make in ((canvas_path, canvas), (moodle_path, moodle)):
        if target:
            header, lines = make(grades, ids, assignment)
            write_csv(Path(target), header, lines)
            written.append(Path(target))
    return written


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--canvas", metavar="FILE",
                   help=tr("also write FILE: the scores as Canvas's gradebook import CSV"))
    p.add_argument("--moodle", metavar="FILE",
                   help=tr("also write FILE: the scores as Moodle's grade import CSV"))
    p.add_argument("--lms-ids", metavar="FILE",
                   help=tr("a CSV mapping each learner (column 'learner') to their LMS ids: "
                           "{columns}", columns=", ".join(ID_COLUMNS)))
    p.add_argument("--lms-assignment", default="gpt-kata", metavar="NAME",
                   help=tr("the assignment's column in the exports (default: %(default)s)"))


def write_asked(args: argparse.Namespace, table: Path) -> None:
    """--canvas and --moodle, made from the gradebook.csv just written."""
    write_exports(table, args.canvas, args.moodle, args.lms_ids, args.lms_assignment)
