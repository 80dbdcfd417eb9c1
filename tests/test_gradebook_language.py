"""A class graded in Chinese reads its gradebook's own words in Chinese: the row's note,
the report of a learner who could not be graded, and how a hand-in was read; what
machines read (statuses, cells, keys) stays as it is."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from grader.classroom.gradebook import grading, layouts, outputs
from grader.classroom.gradebook.repositories import Policy, Source
from grader.classroom.gradebook.roster import Learner
from grader.registry import problems

# A run of Latin letters as long as an English word of a sentence: a path, a URL or a
# slug quoted in a Chinese text is allowed, a phrase such as "took longer" is not.
ENGLISH_WORDS = re.compile(r"\b[a-z]{3,}\s[a-z]{3,}\b")


@pytest.fixture
def chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPT_KATA_LANG", "zh")


def test_a_grade_cut_short_is_reported_in_the_class_language(
        chinese: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    chosen = problems()[:1]
    learner = Learner("ana", tmp_path, {chosen[0].folder: b"x = 1\n"})
    args = argparse.Namespace(timeout=1, budget=1, memory=1, scratch_mb=1,
                              allow_unisolated=False)
    monkeypatch.setattr(grading, "run_grader", lambda *a, **k: (None, "", None))
    report = grading.grade_learner(learner, chosen, args)
    assert report["status"] == "error"  # a status machines read: unchanged
    assert "评分" in report["message"] and not ENGLISH_WORDS.search(report["message"])
    monkeypatch.setattr(grading, "run_grader", lambda *a, **k: (3, "", None))
    report = grading.grade_learner(learner, chosen, args)
    assert "报告" in report["message"] and not ENGLISH_WORDS.search(report["message"])


def test_the_note_of_a_learner_not_graded_is_in_the_class_language(chinese: None) -> None:
    row = outputs.Row("ana", {"crop-context": "error"}, error="x")
    assert outputs.note(row).startswith("未评分")
    assert outputs.note(outputs.Row("bo", {}, skipped=True), shown=True) == "未改动，未重新评分"


def test_how_a_hand_in_was_read_is_in_the_class_language(chinese: None,
                                                        tmp_path: Path) -> None:
    members = [layouts.Member("01-crop-context/solution.py", "link"),
               layouts.Member("../up/solution.py", "file")]
    notes = layouts.unpack(members, tmp_path)
    assert len(notes) == 2 and not any(ENGLISH_WORDS.search(n) for n in notes), notes
    later = Source("https://example.com/ana.git", later_commits=2).as_report(Policy(None))
    assert later["notes"] == ["另有 2 个更晚的提交未评分"]


def test_a_repository_hides_its_dot_files_in_any_language(tmp_path: Path) -> None:
    members = [layouts.Member(".gitignore", "file"), layouts.Member("x/solution.py", "link")]
    for language in ("en", "zh"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("GPT_KATA_LANG", language)
            assert len(layouts.unpack(members, tmp_path / language)) == 2
            assert len(layouts.unpack(members, tmp_path / f"{language}-repo",
                                      hidden_noted=False)) == 1
