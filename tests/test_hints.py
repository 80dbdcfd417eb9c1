"""Hints on request: a failing grade names the mistake, `gpt-kata hint` gives the fix.

The commands run in a learner's copy (tests/learner.py), so that they write the
copy's `.gpt-kata/status.json`, never the repository's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from learner import kata_copy, run

from grader.registry import find, problems


def write_status(root: Path, status: dict) -> None:
    (root / ".gpt-kata").mkdir(exist_ok=True)
    (root / ".gpt-kata" / "status.json").write_text(json.dumps(status))


def read_status(root: Path) -> dict:
    return json.loads((root / ".gpt-kata" / "status.json").read_text())


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)
def test_every_problem_has_graded_hints(problem):
    assert len(problem.hints) >= 3, f"{problem.folder}: give a nudge, more, and the answer"
    # each hint says more than the last: none repeats one, and the nudge is not the answer
    assert all(problem.hints) and len(set(problem.hints)) == len(problem.hints)


def test_no_hint_but_the_last_holds_a_mistakes_fix():
    """A graded class's copy keeps every hint but the last (the answer) and no mistake's
    fix: a kept hint that holds a fix word for word would give it back."""
    from grader.release.answers import every_fix

    fixes = every_fix()
    for problem in problems():
        for hint in problem.hints[:-1]:
            assert not [fix for fix in fixes if fix in hint], (problem.slug, hint)


@pytest.mark.parametrize("slug, guard, body", [
    ("clip-grad-norm", "if not grads: return torch.tensor(0.0)", "torch.stack"),
    ("batches", "if len(data) <= context_length: raise ValueError", "torch.randint"),
    ("bpe", "if vocab_size < 256: raise ValueError", "while 256 + len(merges)"),
])
def test_an_answer_meets_the_edge_case_its_grade_checks(slug, guard, body):
    """The last hint is the answer: these once left out an edge case a graded check
    refuses (no gradients at all: torch.stack of an empty list; data that holds no
    window; a vocab_size below 256), so that the answer as given failed its grade."""
    answer = find(slug).hints[-1]
    assert guard in answer and answer.index(guard) < answer.index(body), answer


def test_a_named_mistake_keeps_its_fix_aside():
    from grader.grading.values.failures import GradeFailure, Mistake, naming

    mistake = Mistake("do not crop the context", "crop it first", print)
    diagnosis = GradeFailure("new character 1 differs", lambda: naming(mistake)).diagnosis
    assert diagnosis.says == ("new character 1 differs\n"
                              "This is what happens when you do not crop the context.")
    assert diagnosis.hints == ["crop it first"] and diagnosis.mistake is mistake
    assert GradeFailure("plain failure").diagnosis.hints == []


def test_hints_go_from_a_nudge_to_the_answer_then_stay(tmp_path):
    root = kata_copy(tmp_path)
    problem = find("decode")
    shown = [run(root, "hint", "decode") for _ in range(len(problem.hints) + 1)]
    assert all(done.returncode == 0 for done in shown), shown[0].stderr
    for hint, done in zip(problem.hints, shown, strict=False):
        assert hint in done.stdout
    assert "the answer" in shown[-2].stdout and problem.hint in shown[-1].stdout
    assert "again" not in shown[-1].stdout  # nothing stronger is left to offer
    assert read_status(root)["decode"]["hints_shown"] == len(problem.hints)


def test_a_graded_class_copys_last_hint_is_not_called_the_answer(tmp_path):
    """A copy without the answers keeps every hint but the last: the last it shows is
    no answer, and is not called one."""
    from grader.release.answers import registry_without_answers

    root = kata_copy(tmp_path)
    registry = root / "problems" / "registry.toml"
    registry.write_bytes(registry_without_answers(registry.read_text("utf-8"))[0])
    problem = find("decode")
    shown = [run(root, "hint", "decode") for _ in range(len(problem.hints) - 1)]
    assert all(done.returncode == 0 for done in shown), shown[0].stderr
    assert problem.hints[-2] in shown[-1].stdout
    assert not any("the answer" in done.stdout for done in shown), shown[-1].stdout


def test_the_diagnosed_mistake_comes_first_then_the_problem_hints(tmp_path):
    root = kata_copy(tmp_path)
    write_status(root, {"temperature": {
        "status": "fail", "mistake_hint": "divide, do not multiply",
        "mistake": "This is what happens when you multiply the logits by the temperature.",
        "mistake_hint_shown": False}})
    first = run(root, "hint", "problems/08-temperature/")
    assert first.returncode == 0, first.stderr
    assert "multiply the logits" in first.stdout and "divide, do not multiply" in first.stdout
    second = run(root, "hint", "8")
    assert find("temperature").hints[0] in second.stdout
    assert "divide, do not multiply" not in second.stdout


def test_hint_without_a_name_picks_the_first_problem_not_passed(tmp_path):
    root = kata_copy(tmp_path)
    done = run(root, "hint")
    assert done.returncode == 0, done.stderr
    assert "01-crop-context" in done.stdout
    assert find("crop-context").hints[0] in done.stdout


def test_recording_a_grade_keeps_the_fix_for_later(tmp_path, monkeypatch):
    from grader import paths
    from grader.grading.engine.plugin import TestResult
    from grader.grading.values.failures import NamedMistake
    from grader.learner import status
    from grader.reports.report import ProblemSummary, Report

    monkeypatch.setattr(paths, "STATE", tmp_path / "state")
    problem = find("generate")
    submission = tmp_path / "solution.py"
    submission.write_text("# a learner's attempt\n")
    failed = TestResult("a check", problem, "fail",
                        "differs\nThis is what happens when you do not crop the context.",
                        hint="crop to the last context_length tokens",
                        mistake=NamedMistake("generate/do-not-crop-the-context",
                                             "do not crop the context",
                                             "crop to the last context_length tokens"))
    report = Report([ProblemSummary(problem, submission, [failed])], "exact", {})
    status.record(report)
    entry = status.load_status()["generate"]
    assert entry["mistake_hint"] == "crop to the last context_length tokens"
    assert entry["mistake"] == "This is what happens when you do not crop the context."
    assert entry["mistake_id"] == "generate/do-not-crop-the-context"
    what, text = status.next_hint(problem)
    assert "crop to the last context_length tokens" in text
    status.record(report)  # the same diagnosis again: its fix is not news
    assert status.next_hint(problem)[1] == problem.hints[0]
    failed.status = "pass"
    status.record(report)
    assert "mistake_hint" not in status.load_status()["generate"]


def test_a_named_mistake_of_01_is_fixed_without_the_answer():
    # 01's answer is one slice; a grade's fix that shows it leaves no hint to give
    from grader.checks.crop_context.check_crop_context import MISTAKES

    answer = "-context_length:]"
    assert answer in find("crop-context").hint
    assert [m.name for m in MISTAKES if answer in m.hint] == []


@pytest.mark.parametrize("mode", ["practice", "classroom"])
def test_only_a_learner_is_told_to_ask_for_a_hint_and_what_to_read_next(mode: str,
                                                                          tmp_path) -> None:
    """`grade --classroom` is read by the instructor, whose kata it is not: no
    "stuck? gpt-kata hint" and no statement to read next."""
    import io

    from rich.console import Console

    from grader.grading.engine.plugin import TestResult
    from grader.reports.report import ProblemSummary, Report, render

    problem = find("generate")
    failed = TestResult("a check", problem, "fail", "differs", hint="crop the context")
    out = io.StringIO()
    render(Report([ProblemSummary(problem, tmp_path / "solution.py", [failed])], "exact", {},
                  mode=mode), Console(file=out, width=200))
    shown = out.getvalue()
    assert "differs" in shown and "0/1 problems pass" in shown, shown
    advice = ["stuck? `gpt-kata hint generate`" in shown, "next: problems/" in shown]
    assert advice == ([True, True] if mode == "practice" else [False, False]), shown
