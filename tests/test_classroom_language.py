"""A class graded in Chinese reads the kata's own words in Chinese beyond the
gradebook's: the Gradescope page its learners read, why a file of theirs was not
taken, and the similarity report its teacher reads. In English each says what it
always said, byte for byte; what machines read (results.json's keys and statuses,
the problems' ids) stays as it is in both."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader import paths
from grader.classroom.gradebook.roster import read_solution
from grader.registry import problems

# Two English words in a row: a path, a slug or a check's [case] quoted in a Chinese
# text is allowed, a phrase of the kata's such as "your code printed" is not.
ENGLISH_WORDS = re.compile(r"\b[a-z]{3,}\s[a-z]{3,}\b", re.IGNORECASE)
CHINESE = re.compile(r"[\u4e00-\u9fff]")
DECODE = next(p for p in problems() if p.slug == "decode")


def speak(monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    monkeypatch.setenv("GPT_KATA_LANG", code)


def test_a_file_not_taken_says_why_in_the_class_language(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    inside = tmp_path / "ana"
    (inside / "01-x").mkdir(parents=True)
    (inside / "01-x" / "Solution.py").write_text("x = 1\n")
    (inside / "02-x").mkdir()
    (inside / "02-x" / "solution.py").symlink_to(tmp_path / "gone.py")
    (tmp_path / "theirs.py").write_text("x = 1\n")
    (inside / "03-x").mkdir()
    (inside / "03-x" / "solution.py").symlink_to(tmp_path / "theirs.py")
    (inside / "04-x" / "solution.py").mkdir(parents=True)
    (inside / "05-x").mkdir()
    (inside / "05-x" / "solution.py").write_bytes(b"#" * (paths.MAX_SOLUTION_BYTES + 1))
    asked = [inside / f"0{n}-x" / "solution.py" for n in range(1, 6)]
    english = ["no such file (Solution.py differs in case, which Linux tells apart)",
               "a broken link", "a link out of the learner's folder", "not a regular file",
               f"larger than {paths.MAX_SOLUTION_BYTES} bytes"]
    speak(monkeypatch, "en")
    assert [paths.leads_out(path, inside) for path in asked] == english
    assert read_solution(inside / "06-x" / "solution.py", inside) == (None, "no such file")
    speak(monkeypatch, "zh")
    chinese = [paths.leads_out(path, inside) for path in asked]
    assert chinese[0] == "没有这个文件（Solution.py 只是大小写不同，而 Linux 会区分大小写）"
    assert chinese[4] == f"超过 {paths.MAX_SOLUTION_BYTES} 字节"
    for said in chinese:
        assert CHINESE.search(said) and not ENGLISH_WORDS.search(said), said
    assert read_solution(inside / "06-x" / "solution.py", inside) == (None, "没有这个文件")
