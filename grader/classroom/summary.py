"""A gradebook.csv as a Markdown table, for a CI run's summary page.

`python -m grader.classroom.summary grades/gradebook.csv >> "$GITHUB_STEP_SUMMARY"`

Learners name their own folders, so every cell is escaped (grading/values/sanitise.py):
no name can end its cell or the table, open a code span, or bring HTML.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

from grader.grading.values.sanitise import markdown_cell, uncell


def markdown_table(rows: list[list[str]], title: str = "Gradebook") -> str:
    if not rows:
        return f"### {title}\n\nno learners\n"
    header, *body = rows
    width = len(header)
    lines = [f"### {title}", "", row_line(header, width), "|" + " --- |" * width]
    lines += [row_line(row, width) for row in body]
    return "\n".join(lines) + "\n"


def row_line(row: list[str], width: int) -> str:
    # The CSV's formula guard (a leading quote) is for spreadsheets, not for readers.
    cells = [markdown_cell(uncell(text)) for text in row[:width]]
    cells += [""] * (width - len(cells))
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m grader.classroom.summary GRADEBOOK.csv", file=sys.stderr)
        return 2
    try:
        with Path(args[0]).open(newline="", encoding="utf-8", errors="replace") as handle:
            rows = list(csv.reader(handle))
    except OSError as exc:
        print(f"gradebook_summary: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(markdown_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
