"""A grade's report shown on the terminal and written where asked (--json, --junit),
whichever grade made it: the kata's checks or a learners' copy's stored answers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from grader.grading.values.sanitise import visible
from grader.locale import tr

if TYPE_CHECKING:
    from rich.console import Console

    from grader.reports.report import Report


def write_reports(args: argparse.Namespace, report: Report) -> bool:
    """--json and --junit; False, having said why in one line, if one could not be written."""
    from grader.reports.junit import write_junit

    written = True
    for option, target, write in (
            ("--json", args.json, report.write_json),
            ("--junit", args.junit, lambda path: write_junit(report.to_json(), path))):
        if not target:
            continue
        try:
            write(Path(target))
        except OSError as exc:
            written = False
            print("gpt-kata grade: " + tr("{option} {target} could not be written: {error}",
                                          option=option, target=target, error=exc),
                  file=sys.stderr)
    return written


def show(report: Report, out: Console, verbose: bool, asking: str = "") -> None:
    """The report on the terminal; an error in rendering is one line on stderr, not a
    traceback, and changes neither the reports nor the exit code. `asking`: how the
    learner asks for a hint there, where not with `gpt-kata hint`."""
    from grader.reports.report import HINT_COMMAND, render

    try:
        render(report, out, verbose=verbose, asking=asking or HINT_COMMAND)
    except Exception as exc:  # noqa: BLE001 - the grade is done and written; say so
        print("gpt-kata grade: " + tr("the report could not be shown ({error}); it was "
                                      "graded and every report was written",
                                      error=f"{type(exc).__name__}: {visible(exc)}"),
              file=sys.stderr)
