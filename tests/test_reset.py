"""`gpt-kata reset`: the starter comes back, the learner's file is kept beside it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from learner import kata_copy, run

from grader.registry import find

MINE = "# my own attempt, hours of work\n"


def test_reset_with_yes_keeps_a_timestamped_backup(tmp_path):
    root = kata_copy(tmp_path)
    folder = root / "problems" / find("generate").folder
    (folder / "solution.py").write_text(MINE)
    done = run(root, "reset", "problems/06-generate/", "--yes")
    assert done.returncode == 0, done.stderr
    starter = (root / "data" / "starters" / folder.name / "solution.py").read_text()
    assert (folder / "solution.py").read_text() == starter
    backups = list(folder.glob("solution.py.*.bak"))
    assert len(backups) == 1 and backups[0].read_text() == MINE
    assert backups[0].name in done.stdout


def test_two_resets_keep_both_files(tmp_path):
    root = kata_copy(tmp_path)
    folder = root / "problems" / find("decode").folder
    for attempt in ("# first\n", "# second\n"):
        (folder / "solution.py").write_text(attempt)
        assert run(root, "reset", "decode", "--yes").returncode == 0
    kept = sorted(b.read_text() for b in folder.glob("solution.py.*.bak"))
    assert kept == ["# first\n", "# second\n"]


def test_reset_without_a_terminal_refuses_in_one_line(tmp_path):
    root = kata_copy(tmp_path)
    solution = root / "problems" / find("softmax").folder / "solution.py"
    solution.write_text(MINE)
    done = run(root, "reset", "softmax", stdin="y\n")
    assert done.returncode == 2
    assert "--yes" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert solution.read_text() == MINE
    assert not list(solution.parent.glob("*.bak"))


def test_reset_of_an_untouched_starter_changes_nothing(tmp_path):
    root = kata_copy(tmp_path)
    done = run(root, "reset", "1")
    assert done.returncode == 0 and "already the starter" in done.stdout
    assert not list((root / "problems").glob("*/*.bak"))


def test_reset_suggests_a_near_miss_name(tmp_path):
    done = run(kata_copy(tmp_path), "reset", "genrate", "--yes")
    assert done.returncode == 2 and "did you mean generate?" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize("answer, replaced", [("y", True), ("n", False)])
def test_reset_on_a_terminal_asks_first(tmp_path, answer, replaced):
    import pty

    root = kata_copy(tmp_path)
    solution = root / "problems" / find("greedy").folder / "solution.py"
    solution.write_text(MINE)
    terminal, its_end = pty.openpty()
    try:
        os.write(terminal, f"{answer}\n".encode())
        done = subprocess.run([sys.executable, "-m", "grader", "reset", "greedy"],
                              stdin=its_end, capture_output=True, text=True, timeout=120,
                              cwd=root)
    finally:
        os.close(terminal)
        os.close(its_end)
    assert "[y/N]" in done.stdout
    assert (solution.read_text() != MINE) == replaced
    assert len(list(solution.parent.glob("*.bak"))) == (1 if replaced else 0)
    assert done.returncode == (0 if replaced else 1)
