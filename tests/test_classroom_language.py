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
from grader.classroom.similarity import Pair, ProblemResult, write_markdown
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


def similarity_results(tmp_path: Path, note: str) -> list[ProblemResult]:
    """One problem's comparison, with a note of compare()'s in the language in use."""
    html = tmp_path / f"{DECODE.folder}.html"
    return [ProblemResult(DECODE, [Pair("ana", "bo", 0.9, 0.5, 120)], 3, [note], html)]


def test_the_similarity_report_is_in_the_class_language(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    speak(monkeypatch, "zh")
    write_markdown(tmp_path / "similarity.md",
                   similarity_results(tmp_path, "cy：不是 UTF-8 文本，未比较"), 10)
    lines = (tmp_path / "similarity.md").read_text("utf-8").splitlines()
    assert lines[0] == "# 相似的解答"
    assert lines[2].startswith("每道题最相似的 10 对")
    assert lines[6] == f"比较了 3 名学习者的文件。[并排对照]({DECODE.folder}.html)"
    assert lines[10] == "| 排名 | 学习者 | 学习者 | 相似度 | 相同的词元数 |"
    assert lines[12] == "| 1 | ana | bo | 90% | 120 |"
    assert not any(ENGLISH_WORDS.search(line) for line in lines), lines


def test_the_similarity_report_in_english_is_as_it_was(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    speak(monkeypatch, "en")
    write_markdown(tmp_path / "similarity.md",
                   similarity_results(tmp_path, "cy: not UTF-8 text, not compared"), 10)
    assert (tmp_path / "similarity.md").read_text("utf-8") == (
        "# Similar solutions\n\n"
        "The 10 most similar pairs of each problem (copydetect; the starter's own code is "
        "not counted). A high score on a short problem can be chance: there are few ways "
        "to write it.\n\n"
        f"## {DECODE.folder}\n\n"
        f"3 learner(s) compared. [Side by side]({DECODE.folder}.html)\n\n"
        "- cy: not UTF-8 text, not compared\n\n"
        "| rank | learner | learner | similarity | shared tokens |\n"
        "| ---: | --- | --- | ---: | ---: |\n"
        "| 1 | ana | bo | 90% | 120 |\n")
