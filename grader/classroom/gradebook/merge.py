"""`gradebook --merge DIR...`: join finished gradebooks (the shards of one class)
into one; with `--roster FILE`, every learner on it gets a row.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
from pathlib import Path

from grader import wording
from grader.classroom.gradebook import shards
from grader.classroom.gradebook.lms_export import write_asked
from grader.classroom.gradebook.outputs import (
    COLUMNS,
    NOTE,
    failed_report,
    report_stem,
    trailing,
    write_csv,
    write_report,
)
from grader.classroom.gradebook.roster_csv import read_roster
from grader.classroom.gradebook.state import load_state, save_state
from grader.grading.values.sanitise import cell, uncell, visible
from grader.learner.errors import EXIT_FAIL, EXIT_PASS, UsageError
from grader.locale import tr
from grader.registry import problems as registry_problems
from grader.reports.scoring import format_points


def merge(args: argparse.Namespace) -> int:
    """Join finished gradebooks (shards of one class) into one in --out."""
    out = Path(args.out)
    header: list[str] | None = None
    first = Path()
    rows: dict[str, list[str]] = {}
    origin: dict[str, Path] = {}
    state: dict[str, str] = {}
    missing = shards.check_complete(list(map(Path, args.merge)), args.allow_partial)
    # With --roster, the merge answers for every learner on it, not only those graded.
    on_roster = roster_names(args)
    for folder in map(Path, args.merge):
        table = folder / "gradebook.csv"
        try:
            with table.open(newline="", encoding="utf-8") as handle:
                lines = list(csv.reader(handle))
        except OSError:
            raise UsageError(tr("--merge {folder}: no gradebook.csv there",
                                folder=folder)) from None
        except (UnicodeDecodeError, csv.Error) as exc:
            raise UsageError(tr("{table} is not a gradebook: {error}", table=table,
                                error=exc)) from None
        if not lines or lines[0][:len(COLUMNS)] != COLUMNS:
            raise UsageError(tr("{table} is not a gradebook", table=table))
        if header is None:
            header, first = lines[0], folder
        elif lines[0] != header:
            # Scores out of different problems cannot share one table.
            raise UsageError(tr("{table} grades other problems than {first}: {problems}",
                                table=table, first=first,
                                problems=", ".join(lines[0][len(COLUMNS):])))
        for line in lines[1:]:
            if not line:
                continue
            # A name is quoted if it would be a formula: again here, for a table that
            # did not quote it (written by an older grader, or by hand).
            name = visible(uncell(line[0]))
            if name in rows:
                raise UsageError(tr("{name} is in both {one} and {other}", name=name,
                                    one=origin[name], other=folder))
            rows[name], origin[name] = [cell(name), *line[1:]], folder
        state.update({name: key for name, key in load_state(folder).items()
                      if name in rows and origin[name] == folder})
    assert header is not None  # argparse asks for at least one folder
    out.mkdir(parents=True, exist_ok=True)
    shards.record(out, None)  # the merged gradebook is the whole class
    for name, folder in origin.items():
        for suffix in (".json", ".junit.xml"):
            source = folder / f"{report_stem(name)}{suffix}"
            if source.resolve() == (out / source.name).resolve():
                continue
            if source.is_file():
                shutil.copyfile(source, out / source.name)
            elif suffix == ".junit.xml":
                # The shard has none (graded again without --junit): one an earlier
                # merge copied says an earlier grade.
                (out / source.name).unlink(missing_ok=True)
    if on_roster is not None:
        absent = fill_from_roster(out, header, rows, on_roster, missing,
                                  junit=any(out.glob("*.junit.xml")))
        if absent and not args.quiet:
            names = ", ".join(absent)
            print("gpt-kata gradebook: " + (
                tr("1 learner on the roster has no result in these gradebooks; their row "
                   "says so: {names}", names=names) if len(absent) == 1 else
                tr("{count} learners on the roster have no result in these gradebooks; their "
                   "rows say so: {names}", count=len(absent), names=names)),
                file=sys.stderr)
    write_csv(out / "gradebook.csv", header, [rows[name] for name in sorted(rows)])
    save_state(out, state)
    write_asked(args, out / "gradebook.csv")
    if not args.quiet:
        print(tr("wrote {table}: {learners} from {gradebooks}",
                 table=out / "gradebook.csv", learners=wording.learners(len(rows)),
                 gradebooks=wording.gradebooks(len(args.merge))))
    end = len(header) - len(trailing(header))
    not_graded = [name for name, line in rows.items() if "error" in line[len(COLUMNS):end]]
    return EXIT_FAIL if not_graded else EXIT_PASS


def roster_names(args: argparse.Namespace) -> list[str] | None:
    """The learners of --roster FILE, for a merge (no repository is needed)."""
    if getattr(args, "roster_file", None) is None:
        return None
    return [entry.name for entry in read_roster(Path(args.roster_file), args.repo_url,
                                                need_urls=False)]


def fill_from_roster(out: Path, header: list[str], rows: dict[str, list[str]],
                     names: list[str], missing: list[str], junit: bool) -> list[str]:
    """Give every learner on the roster whom no gradebook holds an error row and a
    report saying so (exit 1, as for any learner not graded); the names of those."""
    after = trailing(header)  # the repositories' columns and the note are no problems
    problems = len(header) - len(COLUMNS) - len(after)
    why = (tr("no gradebook merged holds a result for them (shards not merged: "
              "{shards})", shards=", ".join(missing)) if missing
           else tr("no gradebook merged holds a result for them"))
    absent = [name for name in names if name not in rows]
    # Scored out of the class's total, as every learner the grader could not grade.
    slugs = header[len(COLUMNS):len(COLUMNS) + problems]
    chosen = [p for p in registry_problems() if p.slug in slugs]
    total = format_points(sum(p.points for p in chosen))
    for name in absent:
        rows[name] = [cell(name), "0", str(problems), "0", total, *["error"] * problems,
                      *[cell(tr("not graded: {why}", why=why)) if c == NOTE else "" for c in after]]
        write_report(out, name, failed_report(why, chosen), junit)
    extras = sorted(set(rows) - set(names))
    if extras:
        print("gpt-kata gradebook: " + tr("not on the roster, kept: {names}",
                                          names=", ".join(extras)), file=sys.stderr)
    return absent
