"""A module whose output changes from call to call is told so on its own wrong cases.

The check of the same output twice says "is a dropout left active?", but it comes
last among a module's checks, and the terminal shows the first three ways a problem
fails: a learner whose F.dropout drops in evaluation mode saw three outputs that were
off, and nothing else.
"""

from __future__ import annotations

from pathlib import Path

from conftest import examples, messages, run_grade
from learner_examples import mistake_text

NOTE = "your module gave another output: is a dropout left active?"


def test_each_wrong_case_of_a_dropping_module_says_its_output_changes(tmp_path: Path) -> None:
    submission = tmp_path / "solution.py"
    submission.write_text(mistake_text(examples("multi-head-attention"),
                                       "dropout_left_active"), "utf-8")
    graded = run_grade("multi-head-attention", "--submission", submission, tmp_path=tmp_path)
    assert graded.report is not None, graded.stderr
    cases = [t for t in graded.report["tests"] if "[a-sentence]" in t["name"]]
    assert cases and cases[0]["status"] == "fail", graded.stdout
    assert NOTE in cases[0]["message"], cases[0]["message"]
    assert "training=self.training" in (cases[0]["hint"] or ""), cases[0]
    assert NOTE in graded.stdout.split("stuck?")[0], graded.stdout  # among what is shown


def test_a_wrong_module_that_repeats_itself_is_not_said_to_drop(tmp_path: Path,
                                                               grade_here) -> None:
    # Only the report's messages are read: graded in the test process's grading
    # process, as the command grades (the test above runs the command).
    submission = tmp_path / "solution.py"
    submission.write_text(mistake_text(examples("multi-head-attention"), "no_projection"),
                          "utf-8")
    report = grade_here("multi-head-attention", submission)
    assert any(t["status"] == "fail" for t in report["tests"]), report["tests"]
    assert "dropout" not in messages(report), messages(report)


def test_a_module_that_never_answers_scores_nothing(tmp_path: Path, grade_here) -> None:
    """A module whose every call raises gave no output to compare twice, and the check
    of the same output twice passed it: one point for code that never answered."""
    submission = tmp_path / "solution.py"
    submission.write_text(mistake_text(examples("attention-head"), "no_super_init"), "utf-8")
    report = grade_here("attention-head", submission)
    assert report["tests"] and all(t["status"] != "pass" for t in report["tests"]), [
        (t["name"], t["status"]) for t in report["tests"]]
    assert "Head.__init__() raised AttributeError" in messages(report), messages(report)
