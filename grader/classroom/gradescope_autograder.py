"""Gradescope's autograder: a report turned into its results.json, and the run itself.

`run_autograder` in a bundle from `gpt-kata gradescope` runs
`python -m grader.classroom.gradescope_autograder`, which finds the submission under the
autograder root (`/autograder`, or `$GPT_KATA_AUTOGRADER_ROOT`), grades it
with `gpt-kata gradebook` as a class of one (its solution files copied out as
data and graded by `grade --classroom` in a process of its own) and writes
`results/results.json` in Gradescope's format: one test per problem, worth its
whole points (reports/scoring.py), its checks listed in its output, with the
report's provenance in `extra_data`. A bundle built with `--late-penalty` applies
it (reports/late.py) by the submission's time in Gradescope's
submission_metadata.json. A bundle built in another language than English
(`gpt-kata --lang zh gradescope`) sets it (LANGUAGE_VARIABLE), so that every word of
the page is in the class's language: this module's, and the report's, which the
gradebook it runs writes in it too; what Gradescope reads (keys, statuses, the
problems' ids) stays as it is.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from textwrap import indent

from grader.classroom.gradebook.outputs import replace_whole
from grader.grading.values.sanitise import markdown_cell, visible
from grader.locale import SETTING, marked, tr, translated
from grader.reports.late import describe, parse_penalty, parse_percent
from grader.reports.provenance import provenance
from grader.reports.scoring import format_points, score_report
from grader.sandbox.host.launch import grader_command, neutral_folder

ROOT_VARIABLE = "GPT_KATA_AUTOGRADER_ROOT"
# Set to 1 by a bundle built with --allow-unisolated.
UNISOLATED_VARIABLE = "GPT_KATA_ALLOW_UNISOLATED"
# The bundle's file that holds the commit it was built from, alone on its line.
BUNDLE_COMMIT = "COMMIT"
# Set by a bundle built with --late-penalty: its rate, and its cap in percent.
LATE_PENALTY_VARIABLE = "GPT_KATA_LATE_PENALTY"
LATE_PENALTY_MAX_VARIABLE = "GPT_KATA_LATE_PENALTY_MAX"
# Set by a bundle built in a language other than English: the class's.
LANGUAGE_VARIABLE = SETTING
# The width of a problem's status in the table, in a fixed-width font's cells.
STATUS_CELLS = 7


# Each status the kata gives, and its word: in the problems' table, and before a check's
# name, where a check that passed reads "passed". Marked, since the table is made when the
# module loads; translated where it is shown, in the language in use.
STATUS_WORDS: dict[str, tuple[str, str]] = {
    "pass": (marked("pass"), marked("passed")),
    "fail": (marked("fail"), marked("fail")),
    "error": (marked("error"), marked("error")),
    "missing": (marked("missing"), marked("missing")),
    "failed": (marked("failed"), marked("failed")),
}


def status_word(status: object, of_check: bool) -> str:
    """A problem's status in the table, or a check's before its name, in the language
    in use; one the kata does not know is shown as it is."""
    words = STATUS_WORDS.get(status) if isinstance(status, str) else None
    return translated(words[of_check]) if words else str(status)


def problem_status(status: object) -> str:
    """A problem's status in the table, in the language in use."""
    return status_word(status, of_check=False)


def check_status(status: object) -> str:
    """A check's status before its name in a test's output ("failed" where the report
    gives none), in the language in use."""
    return status_word(status, of_check=True)


def padded(text: str, cells: int) -> str:
    """`text` filled with spaces to `cells` of a fixed-width font: a Chinese character
    takes two, so that the table's columns stay lined up in every language."""
    from rich.cells import cell_len

    return text + " " * max(0, cells - cell_len(text))


def to_gradescope(report: dict, execution_time: float) -> dict:
    """The report of `grade --json` as Gradescope's results.json: one test per problem,
    worth its whole points, with its checks in its output; a late penalty is a test
    of its own whose negative score the page shows, so the tests add up to the score."""
    report = score_report(copy.deepcopy(report))
    checks: dict[object, list[dict]] = {}
    for test in report.get("tests", []):
        checks.setdefault(test.get("problem"), []).append(test)
    tests = [problem_test(entry, checks.get(entry.get("problem"), []))
             for entry in report.get("problems", [])]
    late = report.get("late")
    if isinstance(late, dict) and late.get("points"):
        tests.append({"name": tr("late penalty"), "score": -late["points"], "max_score": 0,
                      "status": "failed", "output": describe(late), "visibility": "visible"})
    width = max((len(str(p.get("problem", "?"))) for p in report.get("problems", [])),
                default=0)
    rows = [f"{p.get('number', 0):>2} {p.get('problem', '?'):<{width}} "
            f"{padded(problem_status(p.get('status', '?')), STATUS_CELLS)} "
            + tr("{passed}/{total} checks {score}/{max_score} points",
                 passed=f"{p.get('passed', 0):>2}", total=f"{p.get('total', 0):<2}",
                 score=f"{format_points(p['score']):>6}",
                 max_score=format_points(p['max_score']))
            for p in report.get("problems", [])]
    # Markdown, with the table in a code block: Gradescope shows it in a fixed-width
    # font with its columns lined up (as plain text its spaces would collapse).
    parts = ["```text\n" + "\n".join(rows) + "\n```"] if rows else []
    parts.append(tr("score {score}/{max_score}", score=format_points(report["score"]),
                    max_score=format_points(report["max_score"])))
    if describe(late):
        parts.append(describe(late))
    if report.get("message"):
        parts.append(tr("grader: {message}", message=markdown_cell(report["message"])))
        # How the submission was read (where its problems were looked for, and what was
        # near): the one line that says why a solution.py uploaded alone counts for none.
        parts += [markdown_cell(note) for note in report.get("notes") or []
                  if isinstance(note, str)]
    # A report the grader could not write has none: then at least what ran here.
    extra = {"max_score": report["max_score"],
             "provenance": report.get("provenance") or provenance({}, [], "classroom")}
    return {
        "score": report["score"],
        "execution_time": round(execution_time, 3),
        "output": ("\n\n".join(parts) if rows or report.get("message")
                   else tr("nothing was graded")),
        "output_format": "md",
        "test_output_format": "text",
        "visibility": "visible",
        "extra_data": extra,
        "tests": tests,
    }


def problem_test(entry: dict, checks: list[dict]) -> dict:
    """One problem as one Gradescope test: its whole points, and each check on a line
    of its output, a failure's message (and what the code printed) under it."""
    # Here, not at the top: the report's module imports rich, and a class's merge job
    # (gradebook merge, which reads this module's names) runs with no package installed.
    from grader.reports.report import check_title

    lines = []
    for check in checks:
        passed = check.get("status") == "pass"
        # The check's title in the class's language; its English is the report's id.
        name = check_title(str(check.get("check") or check.get("name", "?")))
        lines.append(tr("{status}: {check}", status=check_status(check.get("status", "failed")),
                        check=name))
        if not passed and check.get("message"):
            lines.append(indent(str(check["message"]), "    "))
        if not passed and check.get("output"):
            lines.append(indent(tr("your code printed:") + f"\n{check['output']}", "    "))
    if entry.get("fixed_counted") is False:
        lines.append(tr("the other checks do not count until the drawn examples pass"))
    if not checks:
        lines.append(problem_status(entry["status"]) if entry.get("status")
                     else tr("not graded"))
    number = entry.get("number", 0)
    return {
        "name": f"{number:02d}-{entry.get('problem', '?')}" if isinstance(number, int)
                else str(entry.get("problem", "?")),
        "score": entry["score"],
        "max_score": entry["max_score"],
        "status": "passed" if entry.get("status") == "pass" else "failed",
        "output": "\n".join(lines),
        # Plain text, whatever the default: what the learner's code printed or raised
        # is shown as written, never rendered as Markdown or HTML (a link, an image).
        "output_format": "text",
        "visibility": "visible",
    }


def submission_root(submission: Path) -> Path:
    """Where the kata is in the submission, found as the gradebook finds a learner's
    (grader/classroom/gradebook/layouts.py): an upload of a zipped folder arrives as that folder,
    perhaps beside __MACOSX/, so a lone folder (or src/) is looked into, never a link."""
    from grader.classroom.gradebook.layouts import find

    found = find(submission, submission.resolve(), str(submission), [])
    if found.looked_for:
        return submission  # the gradebook looks again (into a zip too) and says what it sought
    folder = found.folder
    return folder.parent if folder.name == "problems" and folder != submission else folder


def grade(submission: Path, work: Path) -> dict:
    """The submission's report: graded as the one learner of a class, so that it is
    graded as data in classroom mode and a missing problem still counts its checks."""
    roster = work / "roster"
    roster.mkdir()
    (roster / "submission").symlink_to(submission_root(submission).resolve(),
                                       target_is_directory=True)
    unisolated = os.environ.get(UNISOLATED_VARIABLE) == "1"
    command = grader_command("grader", "gradebook", str(roster), "--out", str(work / "out"),
                             "--jobs", "1", "-q", *(["--allow-unisolated"] if unisolated else []))
    # This grader's gradebook, whatever the submission holds (a grader/ folder of its own).
    done = subprocess.run(command, capture_output=True, text=True, cwd=neutral_folder())
    try:
        report = json.loads((work / "out" / "submission.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        last = (done.stderr.strip().splitlines()[-1:]
                or [tr("exit code {code}", code=done.returncode)])
        # whatever the grader's stderr held is shown, never obeyed
        return {"message": tr("the grader could not run: {error}", error=visible(last[0])),
                "tests": []}
    # What the gradebook says it looked in is this run's private folder: to the learner,
    # that is their submission.
    private = str(roster / "submission")
    for entry in [report, *report.get("tests", [])]:
        if isinstance(entry, dict) and isinstance(entry.get("message"), str):
            entry["message"] = entry["message"].replace(private, tr("your submission"))
    if isinstance(report.get("notes"), list):
        report["notes"] = [n.replace(private, tr("your submission"))
                           for n in report["notes"] if isinstance(n, str)]
    return report


def name_bundle_commit(graded: dict, commit_file: Path) -> None:
    """An installed grader knows no commit; the bundle's BUNDLE_COMMIT file holds the
    one it was built from, and nothing else."""
    grader = graded["extra_data"]["provenance"].setdefault("grader", {})
    if grader.get("commit"):
        return
    try:
        commit = commit_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return
    if re.fullmatch("[0-9a-f]{40}", commit):
        grader["commit"] = commit


def minutes_late(metadata: dict) -> int:
    """How late Gradescope's submission is, in whole minutes begun (0 if on time),
    from its submission_metadata.json: `created_at` against the due date, a
    submitter's own (an extension Gradescope records for them) before the
    assignment's. ValueError if the file does not say."""
    submitted = when(metadata.get("created_at"))
    own = [when(user["assignment"]["due_date"]) for user in metadata.get("users") or []
           if isinstance(user, dict) and isinstance(user.get("assignment"), dict)
           and user["assignment"].get("due_date")]
    assignment = metadata.get("assignment")
    due = max(own) if own else when(assignment.get("due_date")
                                    if isinstance(assignment, dict) else None)
    late = (submitted - due).total_seconds()
    return math.ceil(late / 60) if late > 0 else 0


def when(text: object) -> datetime:
    if not isinstance(text, str):
        raise ValueError(tr("no time given"))
    read = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
    moment = datetime.fromisoformat(read)
    if moment.tzinfo is None:
        raise ValueError(tr("{time} has no time zone", time=repr(text)))
    return moment


def bundle_settings() -> str:
    """The bundle's own settings a grade is made under, as run_autograder sets them: its
    late penalty, and whether its drawn examples come from the instructor's seed (never
    the seed itself: a build log may be read by others)."""
    from grader.grading.subject.examples_seed import SEED_VARIABLE

    rate = os.environ.get(LATE_PENALTY_VARIABLE, "")
    try:
        late = (parse_penalty(rate, parse_percent(os.environ.get(LATE_PENALTY_MAX_VARIABLE)
                                                  or "100")).policy if rate else tr("none"))
    except ValueError as exc:
        late = tr("{rate}, which cannot be read ({error})", rate=rate, error=exc)
    seed = (tr("the seed the bundle was built with") if os.environ.get(SEED_VARIABLE)
            else tr("the grader's own seed (the bundle carries none)"))
    return tr("late penalty: {late}; drawn examples: from {seed}", late=late, seed=seed)


def late_penalty_of(root: Path, report: dict) -> tuple[dict | None, str]:
    """The report's `late` entry under the bundle's late penalty (none without one),
    and what to say if the submission's time could not be read."""
    rate = os.environ.get(LATE_PENALTY_VARIABLE, "")
    if not rate or not report.get("problems"):
        return None, ""
    try:
        penalty = parse_penalty(rate, parse_percent(
            os.environ.get(LATE_PENALTY_MAX_VARIABLE) or "100"))
        metadata = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
        minutes = minutes_late(metadata if isinstance(metadata, dict) else {})
    except FileNotFoundError:  # Gradescope always writes it; a run by hand may not
        return None, tr("no late penalty was applied: there is no submission_metadata.json "
                        "beside the submission to give its time")
    except (OSError, ValueError, KeyError, TypeError, OverflowError) as exc:
        return None, tr("no late penalty was applied: the submission's time is unknown "
                        "({error})", error=exc)
    return (penalty.entry(minutes) if minutes else None), ""


def run(root: Path) -> int:
    started = time.monotonic()
    results = root / "results" / "results.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    submission = root / "submission"
    if not submission.is_dir():
        report = {"message": tr("no submission folder at {path}", path=submission),
                  "tests": []}
    else:
        with tempfile.TemporaryDirectory(prefix="gpt-kata-gradescope-") as work:
            report = grade(submission, Path(work))
    late, trouble = late_penalty_of(root, report)
    if late is not None:
        report["late"] = late
    graded = to_gradescope(report, time.monotonic() - started)
    if trouble:
        graded["output"] += f"\n\n{visible(trouble)}"
    name_bundle_commit(graded, root / "source" / BUNDLE_COMMIT)
    # Written last and whole, after every process that ran the submission has ended.
    replace_whole(results, json.dumps(graded, indent=2) + "\n")
    # The log shows what the learner's page shows, the score in it once.
    print(graded["output"])
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        from grader.classroom.gradescope_check import self_test

        return self_test(grade, os.environ.get(UNISOLATED_VARIABLE) == "1", bundle_settings())
    root = Path(os.environ.get(ROOT_VARIABLE) or "/autograder")
    return run(root)


if __name__ == "__main__":
    sys.exit(main())
