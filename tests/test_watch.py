"""`gpt-kata watch` without a terminal: one plain line per grade, a new grade per save."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from conftest import ROOT, readline_within
from learner import learner_kata

# Far beyond any grade: a watcher that never prints fails the test instead of hanging it.
PATIENCE = 300.0


def next_line(watcher: subprocess.Popen[str]) -> str:
    assert watcher.stdout is not None
    line = readline_within(watcher.stdout, PATIENCE)
    assert line, f"watch printed nothing within {PATIENCE:g} s"
    return line


@contextlib.contextmanager
def watching(kata: Path, problem: str) -> Iterator[subprocess.Popen[str]]:
    """`gpt-kata watch PROBLEM --stay` running in `kata`; it must end without a traceback."""
    watcher = subprocess.Popen(
        [sys.executable, "-m", "grader", "watch", problem, "--stay"], cwd=kata,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        yield watcher
    finally:
        watcher.kill()
        watcher.wait()
    assert "Traceback" not in (watcher.stderr.read() if watcher.stderr else "")


def test_watch_grades_again_on_each_save(tmp_path: Path) -> None:
    kata = learner_kata(tmp_path)
    target = kata / "problems" / "01-crop-context" / "solution.py"
    starter = target.read_text()
    shutil.copy(ROOT / "solutions" / "01-crop-context" / "solution.py", target)
    with watching(kata, "crop-context") as watcher:
        first = next_line(watcher)
        assert "01-crop-context pass (7/7 checks pass" in first, first
        time.sleep(0.3)  # a modification time of its own for the save
        target.write_text(starter)
        second = next_line(watcher)
        assert "01-crop-context error (0/7 checks pass" in second, second


def test_saving_an_earlier_solution_a_problem_uses_grades_it_again(tmp_path: Path) -> None:
    from test_reuse import TOP_K_TOP_P  # 11 built with solution_of("top-k") and (10)

    kata = learner_kata(tmp_path)
    for folder in ("09-top-k", "10-top-p"):
        shutil.copy(ROOT / "solutions" / folder / "solution.py",
                    kata / "problems" / folder / "solution.py")
    (kata / "problems" / "11-top-k-top-p" / "solution.py").write_text(TOP_K_TOP_P)
    top_k = kata / "problems" / "09-top-k" / "solution.py"
    with watching(kata, "top-k-top-p") as watcher:
        first = next_line(watcher)
        assert "11-top-k-top-p pass" in first, first
        time.sleep(0.3)  # a modification time of its own for the save
        shutil.copy(ROOT / "data" / "starters" / "09-top-k" / "solution.py", top_k)
        second = next_line(watcher)
        assert second.split()[1:3] == ["11-top-k-top-p", "error"], second


class Graded:
    """A Watcher whose files never change and whose grades are only recorded."""

    def __init__(self, monkeypatch, statuses: dict[str, str], keys: list[str | None]) -> None:
        import io

        from rich.console import Console

        from grader.learner import status, watch
        from grader.registry import find, problems

        everything = {p.slug: "pass" for p in problems()} | statuses
        monkeypatch.setattr(status, "learner_status", lambda p: everything[p.slug])
        monkeypatch.setattr(watch, "POLL", 0.0)
        pressed = iter(keys)
        self.watcher = watch.Watcher(find(next(iter(statuses))), pool=None, interactive=True,
                                     stay=True, keys=lambda: next(pressed))
        self.watcher.out = Console(file=io.StringIO(), width=200)
        self.grades: list[str] = []
        monkeypatch.setattr(self.watcher, "watched", lambda: ("unchanged",))
        monkeypatch.setattr(self.watcher, "grade",
                            lambda: self.grades.append(self.watcher.problem.slug) or "fail")

    def printed(self) -> str:
        return self.watcher.out.file.getvalue()


def test_n_skips_to_the_next_problem_not_passed_then_wraps_around(monkeypatch) -> None:
    graded = Graded(monkeypatch, {"crop-context": "fail", "softmax": "todo"},
                    [None, "n", None, "N", "q"])
    assert graded.watcher.run() == 0
    assert graded.grades == ["crop-context", "softmax", "crop-context"]
    assert "skipped 03-softmax; next: problems/01-crop-context/README.md" in graded.printed()


def test_n_stays_when_every_other_problem_passes(monkeypatch) -> None:
    graded = Graded(monkeypatch, {"softmax": "fail"}, ["n", "r", "\x04"])
    assert graded.watcher.run() == 0
    assert graded.grades == ["softmax", "softmax"]  # graded first, then again only for r
    assert "every other problem passes" in graded.printed()


def test_the_list_keeps_one_column_for_the_longest_slug(monkeypatch) -> None:
    from grader.registry import problems

    graded = Graded(monkeypatch, {"crop-context": "fail"}, ["l", "q"])
    graded.watcher.run()
    rows = [line for line in graded.printed().splitlines() if line[:4].strip().isdigit()]
    assert len(rows) == len(problems())
    columns = {row.index(" pass") if " pass" in row else row.index(" fail") for row in rows}
    assert len(columns) == 1, rows  # every status starts at the same place


def test_windows_keys_come_from_msvcrt(monkeypatch) -> None:
    import types

    from grader.learner import watch

    codes = ["\xe0", "H", "n", "\x00", ";", "Q"]  # up arrow, n, F1, Q
    fake = types.SimpleNamespace(kbhit=lambda: bool(codes), getwch=lambda: codes.pop(0))
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    monkeypatch.setattr(sys, "platform", "win32")
    read = watch.key_reader(True)
    assert [watch.action_of(read()) for _ in range(4)] == [None, "next", None, "quit"]
    assert read() is None and not codes  # nothing pressed: no waiting
    assert watch.key_reader(False)() is None


def test_a_file_missing_from_the_start_is_said_at_once(monkeypatch) -> None:
    """The first look found no file, as "nothing seen yet" was: watch said nothing."""
    graded = Graded(monkeypatch, {"softmax": "fail"}, [None, "r", "q"])
    monkeypatch.setattr(graded.watcher, "watched", lambda: None)
    assert graded.watcher.run() == 0
    assert graded.grades == []
    # Said at the start, and again when r asks for the file once more.
    assert graded.printed().count("waiting for problems/03-softmax/solution.py") == 2


def test_each_change_of_what_the_file_holds_is_graded_once(monkeypatch, tmp_path: Path) -> None:
    """A save that lands as two writes (emptied, then written) is graded once, whole;
    a touch, or a save of what was graded, is not graded again; a save during a grade
    is graded after it. Before, each of the first two was graded once more than it
    needed (the half-written file, the touch), and the last not at all."""
    import io

    from rich.console import Console

    from grader.learner import watch
    from grader.registry import find

    file = tmp_path / "problems" / "01-crop-context" / "solution.py"
    file.parent.mkdir(parents=True)
    file.write_text("first\n")
    problem = find("crop-context")
    monkeypatch.setattr(type(problem), "starter", property(lambda _: file))  # this file
    monkeypatch.setattr(watch, "POLL", 0.0)
    stamp = iter(range(10**9, 2 * 10**9, 10**6))  # each write a modification time of its own

    def save(text: str) -> None:
        file.write_text(text)
        os.utime(file, ns=(next(stamp),) * 2)

    grades: list[str] = []

    def grade() -> str:
        grades.append(file.read_text())
        if len(grades) == 3:
            save("saved while grading\n")
        return "fail"

    # What happens between two looks at the file, one step a look.
    steps = [None, None,
             lambda: save(""), lambda: save("second\n"), None,  # one save, two writes
             lambda: os.utime(file, ns=(next(stamp),) * 2), None, None,  # a touch
             lambda: save("second\n"), None, None,  # saved again, unchanged
             lambda: save("third\n"), None, None, None, None, None]
    remaining = iter(steps)

    def keys() -> str | None:
        step = next(remaining, "q")
        if callable(step):
            step()
            return None
        return step

    watcher = watch.Watcher(problem, pool=None, interactive=False, stay=True, keys=keys)
    watcher.out = Console(file=io.StringIO(), width=200)
    monkeypatch.setattr(watcher, "grade", grade)
    assert watcher.run() == 0
    assert grades == ["first\n", "second\n", "third\n", "saved while grading\n"]
