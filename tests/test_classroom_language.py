"""A class graded in Chinese reads the kata's own words in Chinese beyond the
gradebook's: the Gradescope page its learners read, why a file of theirs was not
taken, and the similarity report its teacher reads. In English each says what it
always said, byte for byte; what machines read (results.json's keys and statuses,
the problems' ids) stays as it is in both."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grader import paths
from grader.classroom import gradescope_autograder as gradescope
from grader.classroom import gradescope_bundle
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
    assert lines[6] == f"比较了 3 位学习者的文件。[并排对照]({DECODE.folder}.html)"
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
        f"3 learners compared. [Side by side]({DECODE.folder}.html)\n\n"
        "- cy: not UTF-8 text, not compared\n\n"
        "| rank | learner | learner | similarity | shared tokens |\n"
        "| ---: | --- | --- | ---: | ---: |\n"
        "| 1 | ana | bo | 90% | 120 |\n")


def decode_report() -> dict:
    """A report as the gradebook writes it in Chinese: its messages are the grade's,
    already in the class's language; its check names are the English ids."""
    return {
        "version": 3, "status": "fail", "message": None,
        "problems": [{"problem": "decode", "number": 5, "status": "fail", "passed": 1,
                      "total": 2, "submission": "x"},
                     {"problem": "softmax", "number": 8, "status": "missing", "passed": 0,
                      "total": 0, "submission": None}],
        "tests": [
            {"check": "Decoding with the shipped vocabulary", "problem": "decode",
             "status": "pass", "message": None, "output": None},
            {"check": "Decoding random ids with other vocabularies, against the reference "
                      "[seed-3]", "problem": "decode", "status": "fail",
             "message": "第 2 个字符不同", "output": "debug"},
        ],
        "late": {"minutes": 150, "policy": "10%/h", "percent": 30},
    }


def test_the_gradescope_page_is_in_the_class_language(
        monkeypatch: pytest.MonkeyPatch) -> None:
    speak(monkeypatch, "zh")
    results = gradescope.to_gradescope(decode_report(), 1.0)
    decode, softmax, late = results["tests"]
    # What Gradescope reads: unchanged.
    assert [t["status"] for t in results["tests"]] == ["failed", "failed", "failed"]
    assert (decode["name"], softmax["name"]) == ("05-decode", "08-softmax")
    assert decode["output"].splitlines() == [
        "通过：用随附词表解码",
        "未通过：用其他词表解码随机 id，对照参考答案 [seed-3]",
        "    第 2 个字符不同",
        "    你的代码输出：",
        "    debug"]
    assert softmax["output"] == "缺失"
    # 150 minutes late at 10% an hour begun: 30% of the 5 points earned, 2 half up.
    assert late["name"] == "迟交扣分"
    assert late["output"] == "迟交 2.5 小时，10%/h：-2 分（原为 5 分）"
    page = results["output"]
    # The statuses' column as wide in a fixed-width font as in English: a Chinese
    # character takes two cells.
    assert " 5 decode  未通过   1/2  项检查通过      5/10 分\n" in page
    assert " 8 softmax 缺失     0/0  项检查通过      0/10 分\n" in page
    assert "得分 3/20" in page
    for text in (page, *(t["output"] for t in results["tests"])):
        assert CHINESE.search(text) and not ENGLISH_WORDS.search(text), text


def test_the_gradescope_page_in_english_is_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    speak(monkeypatch, "en")
    report = decode_report()
    report["tests"][1]["message"] = "character 2 differs"
    results = gradescope.to_gradescope(report, 1.0)
    decode, softmax, late = results["tests"]
    assert decode["output"] == (
        "passed: Decoding with the shipped vocabulary\n"
        "fail: Decoding random ids with other vocabularies, against the reference [seed-3]\n"
        "    character 2 differs\n"
        "    your code printed:\n"
        "    debug")
    assert softmax["output"] == "missing"
    assert (late["name"], late["output"]) == ("late penalty",
                                              "2.5 h late, 10%/h: -2 points (from 5)")
    assert results["output"] == (
        "```text\n"
        " 5 decode  fail     1/2  checks      5/10 points\n"
        " 8 softmax missing  0/0  checks      0/10 points\n"
        "```\n\n"
        "score 3/20\n\n"
        "2.5 h late, 10%/h: -2 points (from 5)")
    nothing = gradescope.to_gradescope({"tests": [], "problems": []}, 0.0)
    assert nothing["output"] == "nothing was graded"


def test_a_bundle_built_in_chinese_grades_in_chinese(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`gpt-kata --lang zh gradescope` records the language in run_autograder, as it
    records the seed and the late penalty, and the autograder it starts speaks it
    wherever Gradescope's machine is set up otherwise."""
    built: dict = {}
    speak(monkeypatch, "en")  # restored after the test: --lang sets it for the process

    def build(root: Path, out: Path, allow_unisolated: bool, seed: str = "",
              late: object = None, code: str = "en") -> tuple[str, str]:
        built["code"] = code
        return "gpt_kata.whl", "here"

    monkeypatch.setattr(gradescope_bundle, "build_bundle", build)
    monkeypatch.setattr(gradescope_bundle, "checkout_root", lambda: tmp_path)
    from grader.cli.main import main

    assert main(["--lang", "zh", "gradescope", "--out", str(tmp_path / "a.zip")]) == 0
    assert built["code"] == "zh"
    speak(monkeypatch, "en")
    assert main(["gradescope", "--out", str(tmp_path / "a.zip")]) == 0
    assert built["code"] == "en"

    english = gradescope_bundle.run_script(False)
    assert "GPT_KATA_LANG" not in english
    script = gradescope_bundle.run_script(False, code="zh")
    assert "export GPT_KATA_LANG=zh\n" in script
    assert gradescope_bundle.run_script(False, code="zh", self_test=True).count(
        "export GPT_KATA_LANG=zh\n") == 1
    # The script as Gradescope runs it, in a machine whose own language is English:
    # no submission, so nothing is graded, and the page says so in Chinese.
    (tmp_path / "run_autograder").write_text(script, encoding="utf-8")
    env = {**os.environ, "GPT_KATA_PYTHON": sys.executable, "LANG": "C.UTF-8",
           "GPT_KATA_AUTOGRADER_ROOT": str(tmp_path)}
    env.pop("GPT_KATA_LANG", None)
    done = subprocess.run(["bash", str(tmp_path / "run_autograder")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "results" / "results.json").read_text("utf-8"))
    assert results["output"].startswith("得分 0/0\n\n评分器："), results["output"]
    assert "处没有提交的文件夹" in results["output"]


def self_tested(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                isolation: object, report: dict, allowed: bool) -> tuple[int, str]:
    """What the bundle's self_test prints and returns on a machine giving `isolation`,
    its grade of the first problem's reference being `report`."""
    from grader.classroom import gradescope_check
    from grader.sandbox.worker import machine

    monkeypatch.setattr(machine, "probe", lambda: isolation)
    code = gradescope_check.self_test(lambda submission, work: report, allowed=allowed)
    return code, capsys.readouterr().out


def test_the_bundle_self_test_speaks_the_class_language(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`gpt-kata --lang zh gradescope` sets the language in self_test as in
    run_autograder (test_a_bundle_built_in_chinese_grades_in_chinese): what it prints is
    in it, the layers' names and the problem's id staying as they are."""
    from grader.sandbox.worker.machine import Isolation

    landlock = Isolation(platform="linux", landlock_abi=3, rlimits=True)
    graded = {"problems": [{"problem": "crop-context", "score": 10, "max_score": 10}],
              "provenance": {"isolation": ["landlock-abi3", "rlimits"]}, "tests": []}
    refused = {"message": "the grader could not run: classroom mode needs Linux with Landlock",
               "tests": []}
    lacks = "memory-cgroup, pids-cgroup, cpu-cgroup, scratch-tmpfs, unprivileged-uid"
    speak(monkeypatch, "en")
    assert self_tested(monkeypatch, capsys, landlock, graded, False) == (0, (
        "platform: linux\n"
        "sandbox layers this container gives: landlock-abi3, rlimits\n"
        f"layers it lacks: {lacks}\n"
        "graded the reference of 01-crop-context as a submission: 10/10 points, "
        "under landlock-abi3, rlimits\n"
        "self-test passed: submissions will be graded as shown\n"))
    assert self_tested(monkeypatch, capsys, Isolation(platform="linux"), refused, False) == (
        1, "platform: linux\n"
        "sandbox layers this container gives: none\n"
        f"layers it lacks: {lacks}\n"
        "classroom grading will be REFUSED here: there is no Landlock (Linux 5.13 or newer), "
        "so every submission would score 0 with that reason. Grade where the kernel has it, "
        "or rebuild the bundle with --allow-unisolated to grade without the sandbox.\n"
        "graded the reference of 01-crop-context as a submission: 0/10 points\n"
        "grader: the grader could not run: classroom mode needs Linux with Landlock\n"
        "self-test FAILED: fix the above before learners submit\n")

    speak(monkeypatch, "zh")
    code, said = self_tested(monkeypatch, capsys, landlock, graded, False)
    assert code == 0
    assert said.splitlines() == [
        "平台：linux",
        "这个容器提供的沙箱层：landlock-abi3, rlimits",
        f"它缺少的沙箱层：{lacks}",
        "把 01-crop-context 的参考答案当作一份提交来评分：10/10 分，所用的沙箱层："
        "landlock-abi3, rlimits",
        "自检通过：提交将按上面所示的方式评分"]
    unisolated = self_tested(monkeypatch, capsys, Isolation(platform="linux"), graded, True)
    refusing = self_tested(monkeypatch, capsys, Isolation(platform="linux"), refused, False)
    assert unisolated[0] == 0 and refusing[0] == 1
    assert "不用沙箱评分" in unisolated[1] and "这个容器提供的沙箱层：无\n" in refusing[1]
    assert "这里会拒绝课堂评分" in refusing[1] and "自检未通过" in refusing[1]
    for text in (said, unisolated[1], refusing[1]):
        # The grade's own message, written by the (stubbed) grader, is what it is.
        kept = text.replace(refused["message"], "")
        for line in kept.splitlines():
            assert CHINESE.search(line) and not ENGLISH_WORDS.search(line), line
