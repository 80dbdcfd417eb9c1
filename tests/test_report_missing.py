"""A classroom hand-in's left-out problems in its report: each is "missing", with no file,
and the run's message is what the learner's own files said, not a missing one's."""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.learner.grade import left_out, missing_summary, resolve_submissions
from grader.registry import problems
from grader.reports import results
from grader.reports.report import ProblemSummary, Report

FIRST, SECOND = problems()[:2]


def report(*summaries: ProblemSummary) -> Report:
    return Report(list(summaries), goldens="live-only", platform={}, mode="classroom")


def test_the_message_is_the_handed_in_files(tmp_path: Path) -> None:
    broken = "solution.py:1: SyntaxError: '(' was never closed"
    handed_in = ProblemSummary(SECOND, tmp_path / SECOND.folder / "solution.py",
                               [results.TestResult("loads", SECOND, "error", message=broken)])
    graded = report(missing_summary(FIRST, tmp_path), handed_in)
    assert graded.status == "error" and graded.message == broken
    entry = graded.to_json()["problems"][0]
    assert (entry["status"], entry["submission"], entry["score"]) == ("missing", None, 0)


def test_a_hand_in_of_nothing_says_so(tmp_path: Path) -> None:
    (tmp_path / SECOND.folder / "solution.py").mkdir(parents=True)
    graded = report(missing_summary(FIRST, tmp_path), missing_summary(SECOND, tmp_path))
    assert graded.message == "no solution.py of the 2 problems graded was handed in"
    said = [r.message for s in graded.summaries for r in s.results]
    assert said == [f"missing: {FIRST.folder}/solution.py (no such file): a problem left "
                    "out scores 0", f"missing: {SECOND.folder}/solution.py (not a file): a "
                    "problem left out scores 0"]


def test_only_a_classroom_folder_with_no_problem_named_counts_what_it_leaves_out(
        tmp_path: Path) -> None:
    def args(**given: object) -> argparse.Namespace:
        return argparse.Namespace(**{"classroom": True, "problems": [],
                                     "submission": str(tmp_path), **given})

    handed = {FIRST: tmp_path / FIRST.folder / "solution.py"}
    assert SECOND in left_out(args(), handed) and FIRST not in left_out(args(), handed)
    assert left_out(args(classroom=False), handed) == []
    assert left_out(args(problems=[FIRST.slug]), handed) == []


def test_a_learners_repository_is_graded_from_its_problems_folder(tmp_path: Path) -> None:
    """`--submission` of a learner's repository (its problems/ inside), as the gradebook
    takes one, grades the files in problems/."""
    from grader.learner.grade import resolve_submissions

    solution = tmp_path / "problems" / FIRST.folder / "solution.py"
    solution.parent.mkdir(parents=True)
    solution.write_text("class Solution: ...\n")
    chosen = argparse.Namespace(problems=[], reference=False, submission=str(tmp_path))
    assert resolve_submissions(chosen) == {FIRST: solution}


def test_a_failure_shown_once_leaves_the_others_and_the_hint_line(tmp_path: Path) -> None:
    """Cases that fail alike are shown once; the ways the problem fails after them, and
    the line that offers a hint, are still shown."""
    import io

    from rich.console import Console

    from grader.reports.report import render

    def failed(name: str, message: str) -> results.TestResult:
        return results.TestResult(name, FIRST, "fail", message, alike=message)

    summary = ProblemSummary(FIRST, tmp_path / "solution.py", [
        failed("Fixed [a]", "the list differs"), failed("Fixed [b]", "the list differs"),
        failed("Drawn", "a drawn example differs")])
    written = io.StringIO()
    # A learner's grade: a classroom grade offers no hint (test_hints.py).
    render(Report([summary], goldens="live-only", platform={}), Console(file=written, width=200))
    text = written.getvalue()
    assert "Fixed [a]" in text and "Fixed [b]" not in text and "Drawn" in text
    assert f"gpt-kata hint {FIRST.slug}" in text


def test_a_repositorys_left_out_problem_says_why_of_its_own_folder(tmp_path: Path) -> None:
    from grader.learner.grade import handed_in_folder

    (tmp_path / "problems" / FIRST.folder / "solution.py").mkdir(parents=True)
    folder = handed_in_folder(tmp_path)  # a folder named solution.py: not a file
    assert folder == tmp_path / "problems"
    (said,) = [r.message for r in missing_summary(FIRST, folder).results]
    assert "(not a file)" in said


def test_a_name_in_other_case_is_missing_on_every_disk(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """03-softmax/Solution.py: Linux finds no solution.py, and macOS and Windows, which
    open it as solution.py, count it missing too, for the same reason: one hand-in,
    one score, wherever it is graded."""
    from grader import paths

    folder = tmp_path / FIRST.folder
    folder.mkdir()
    (folder / "Solution.py").write_text("class Solution: pass\n", encoding="utf-8")
    asked = folder / "solution.py"
    reason = "no such file (Solution.py differs in case, which Linux tells apart)"
    assert paths.leads_out(asked, tmp_path) == reason  # Linux
    said = missing_summary(FIRST, tmp_path).results[0].message
    assert "no such file; Solution.py differs in case, which Linux tells apart" in said
    # macOS: the file opens by the name asked for, its folder lists the learner's name.
    (folder / "Solution.py").rename(asked)
    listdir = paths.os.listdir
    monkeypatch.setattr(paths.os, "listdir", lambda where: (
        ["Solution.py"] if Path(where) == folder else listdir(where)))
    assert asked.is_file() and paths.leads_out(asked, tmp_path) == reason
    # A classroom grade of the folder leaves it out, as the gradebook does.
    (tmp_path / SECOND.folder).mkdir()
    (tmp_path / SECOND.folder / "solution.py").write_text("class Solution: pass\n", "utf-8")
    args = argparse.Namespace(submission=str(tmp_path), problems=[], classroom=True,
                              reference=False)
    assert list(resolve_submissions(args)) == [SECOND]
