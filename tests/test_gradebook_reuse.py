"""The gradebook keeps a learner's report only when a new grade could not be stronger:
same files, grader and options, the same examples seed, the same sandbox offered, and
a report graded in classroom mode inside the sandbox. The seed itself is never kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from grader.classroom.gradebook import command, grading
from grader.cli.main import main
from grader.grading.subject.examples_seed import SEED_VARIABLE
from grader.registry import find

SEED = "the instructor's own seed 8c1f"


def report(isolation: list[str], mode: str = "classroom", kind: str | None = None) -> dict:
    """A canned report; with `kind`, its one check failed as that kind of failure."""
    p = find("decode")
    status = "fail" if kind else "pass"
    return {"version": 3, "status": "pass", "message": None, "score": 1, "max_score": 1,
            "mode": mode, "isolation": isolation,
            "problems": [{"problem": p.slug, "number": p.number, "status": "pass",
                          "passed": 1, "total": 1, "submission": "x"}],
            "tests": [{"name": f"{p.folder}: a check", "problem": p.slug, "task_id": p.number,
                       "status": status, "kind": kind, "message": None, "output": None,
                       "score": 1, "max_score": 1}]}


@pytest.fixture
def gradebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Runs the gradebook of one learner with canned grades; returns how many it graded."""
    roster = tmp_path / "roster"
    (roster / "ada" / "05-decode").mkdir(parents=True)
    (roster / "ada" / "05-decode" / "solution.py").write_text("# ada's\n", encoding="utf-8")
    out = tmp_path / "out"
    graded: list[str] = []
    grades = {"isolation": ["user-namespace", "landlock"], "mode": "classroom"}

    def canned(learner, chosen, args, servers=None) -> dict:  # noqa: ANN001
        graded.append(learner.name)
        return report(grades["isolation"], grades["mode"], grades.get("kind"))

    monkeypatch.setattr(grading, "grade_learner", canned)
    monkeypatch.setattr(command, "forking", lambda: False)
    monkeypatch.delenv(SEED_VARIABLE, raising=False)

    def run(*extra: str) -> int:
        before = len(graded)
        assert main(["gradebook", str(roster), "decode", "--out", str(out), "--jobs", "1",
                     *extra]) == 0
        return len(graded) - before

    run.grades = grades
    run.out = out
    return run


def test_an_unchanged_learner_is_not_graded_again(gradebook) -> None:
    assert gradebook() == 1
    assert gradebook() == 0


def test_a_new_seed_grades_again_and_the_seed_is_never_kept(gradebook, monkeypatch) -> None:
    assert gradebook() == 1
    monkeypatch.setenv(SEED_VARIABLE, SEED)
    assert gradebook() == 1
    assert gradebook() == 0
    for path in gradebook.out.rglob("*"):
        if path.is_file():
            assert SEED not in path.read_text(encoding="utf-8", errors="replace"), path
    monkeypatch.setenv(SEED_VARIABLE, SEED + "2")
    assert gradebook() == 1


@pytest.mark.parametrize("weaker", [{"isolation": []},
                                    {"isolation": ["unisolated:--allow-unisolated"]},
                                    {"mode": "practice"}],
                         ids=["no-layers", "unisolated", "practice"])
def test_a_report_from_a_weaker_grade_is_graded_again(gradebook, weaker: dict) -> None:
    gradebook.grades.update(weaker)
    assert gradebook() == 1
    gradebook.grades.update(isolation=["user-namespace", "landlock"], mode="classroom")
    assert gradebook() == 1
    assert gradebook() == 0


def test_allowed_to_grade_unisolated_an_unisolated_report_is_kept(gradebook) -> None:
    gradebook.grades.update(isolation=["unisolated:--allow-unisolated"])
    assert gradebook("--allow-unisolated") == 1
    assert gradebook("--allow-unisolated") == 0


def test_another_sandbox_offered_grades_again(gradebook, monkeypatch) -> None:
    from grader.classroom.gradebook import state

    assert gradebook() == 1
    offered = state.sandbox_offered()
    monkeypatch.setattr(command, "sandbox_offered", lambda: {**offered, "cgroups": []})
    assert gradebook() == 1
    state_file = json.loads((gradebook.out / state.STATE_FILE).read_text(encoding="utf-8"))
    assert list(state_file) == ["ada"]


def test_another_torch_or_hypothesis_grades_again(gradebook, monkeypatch) -> None:
    """torch runs the references, hypothesis draws the examples: either's new version
    may judge the same files otherwise."""
    from grader.classroom.gradebook import state

    installed = state.library_versions()
    assert set(installed) == {"torch", "hypothesis"} and "absent" not in installed.values()
    assert gradebook() == 1
    for name in installed:
        monkeypatch.setattr(command, "library_versions",
                            lambda name=name: {**installed, name: "0.0.1"})
        assert gradebook() == 1
        assert gradebook() == 0
    monkeypatch.setattr(command, "library_versions", lambda: installed)
    assert gradebook() == 1


def test_a_time_out_on_a_busy_machine_is_graded_once_more_at_the_next_run(gradebook,
                                                                         capsys) -> None:
    """A check that ran out of time on a machine too busy to tell slow code from a loop
    (kind `busy`) leaves the learner to be graded once more; a second such time-out in a
    row, and a plain time-out, are final."""
    gradebook.grades.update(kind="busy")
    assert gradebook() == 1
    assert "graded once more at the next run: ada" in capsys.readouterr().out
    assert json.loads((gradebook.out / "ada.json").read_text("utf-8"))["tests"][0]["kind"] \
        == "busy"
    assert gradebook() == 1  # once more: busy again, and final
    assert "graded once more" not in capsys.readouterr().out
    assert gradebook() == 0
    gradebook.grades.update(kind="stuck")
    assert gradebook("--force") == 1
    assert gradebook() == 0
    gradebook.grades.update(kind="busy")  # after a final grade, a new busy time-out
    assert gradebook("--force") == 1
    gradebook.grades.update(kind=None)  # graded once more, on a quiet machine: it passes
    assert gradebook() == 1
    assert gradebook() == 0
    assert json.loads((gradebook.out / "ada.json").read_text("utf-8"))["tests"][0]["kind"] \
        is None


def test_a_report_in_another_language_is_graded_again(gradebook, monkeypatch) -> None:
    # Its messages are in the language it was graded in: `gpt-kata --lang zh gradebook`
    # kept every unchanged learner's English report.
    monkeypatch.setenv("GPT_KATA_LANG", "en")
    assert gradebook() == 1
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    assert gradebook() == 1
    assert gradebook() == 0


def test_what_a_gradebook_records_before_its_fork_server_starts_imports_no_torch() -> None:
    """The options a report is kept under are read before the class's fork server starts,
    which imports torch while the gradebook does: an import of torch there (the seed's
    name once came with the module that draws the examples) made the two run in turn,
    1.7 s of every gradebook."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from grader.classroom.gradebook.state import library_versions, sandbox_offered, "
            "seed_digest\n"
            "seed_digest(), sandbox_offered(), library_versions()\n"
            "print(sorted(m for m in ('torch', 'hypothesis') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, SEED_VARIABLE: SEED}, check=True)
    assert done.stdout.strip() == "[]", done.stdout
