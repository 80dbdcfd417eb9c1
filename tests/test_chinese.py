"""The kata in Chinese: every text a learner reads has its translation, and the
translation keeps what a learner's code and the grader's numbers need.

The catalogs (grader/locale/zh/*.po) are keyed by the English texts, which
grader/maintainer/catalogs.py finds: the registry's titles and hints, each check's
title, each known mistake's name and fix, and each `tr("...")` in the code. A
translation keeps the English one's {fields}, its numbers and its code spans.
The statements are held to the same in tests/test_chinese_statements.py.
"""

from __future__ import annotations

import re
import string
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polib
import pytest

from grader import locale
from grader.locale import CATALOGS
from grader.maintainer import catalogs

if TYPE_CHECKING:
    from grader.registry import Problem

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?(?:e-?\d+)?(?![A-Za-z0-9_])")
CODE_SPAN = re.compile(r"`[^`\n]+`")
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def entries(name: str) -> list[polib.POEntry]:
    return list(polib.pofile(str(CATALOGS / "zh" / f"{name}.po")))


@pytest.mark.parametrize("name", sorted(catalogs.CATALOG_TEXTS))
def test_every_english_text_has_its_chinese(name: str) -> None:
    """A catalog holds exactly the English texts the kata has, each translated:
    `python -m grader.maintainer.catalogs zh` adds what is new, a translator fills it."""
    po = {e.msgid: e.msgstr for e in entries(name)}
    wanted = catalogs.texts(name)
    missing = [t for t in wanted if t not in po]
    stale = [t for t in po if t not in wanted]
    empty = [t for t in wanted if t in po and not po[t].strip()]
    assert not missing, (f"{len(missing)} text(s) not in {name}.po (run python -m "
                         f"grader.maintainer.catalogs zh), the first: {missing[:3]}")
    assert not stale, (f"{name}.po still has texts the kata no longer says (run python -m "
                       f"grader.maintainer.catalogs zh), the first: {stale[:3]}")
    assert not empty, (f"{len(empty)} text(s) of {name}.po untranslated (fill each empty "
                       f"msgstr of grader/locale/zh/{name}.po), the first: {empty[:3]}")


@pytest.mark.parametrize("name", sorted(catalogs.CATALOG_TEXTS))
def test_a_translation_keeps_fields_numbers_and_code(name: str) -> None:
    wrong = []
    for entry in entries(name):
        if not entry.msgstr:
            continue
        english, chinese = entry.msgid, entry.msgstr
        if name in ("messages", "pictures") and fields(english) != fields(chinese):
            wrong.append(f"{english!r}: fields {sorted(fields(chinese))}")
        if set(NUMBER.findall(english)) != set(NUMBER.findall(chinese)):
            wrong.append(f"{english!r}: numbers {sorted(set(NUMBER.findall(chinese)))}")
        if set(CODE_SPAN.findall(english)) != set(CODE_SPAN.findall(chinese)):
            wrong.append(f"{english!r}: code {sorted(set(CODE_SPAN.findall(chinese)))}")
        # A one-word title ("RMSNorm"), code, or fields alone ("{folder}, {what}:") are
        # the same in Chinese; prose is not.
        if (not CHINESE.search(chinese) and not looks_like_code(english)
                and len(re.findall(r"[A-Za-z]{2,}", re.sub(r"\{[^}]*\}", "", english))) > 1):
            wrong.append(f"{english!r}: no Chinese in {chinese!r}")
    assert not wrong, "\n".join(wrong[:10])


def looks_like_code(text: str) -> bool:
    """A hint that is an answer written as code ("return self.down_proj(...)") reads the
    same in every language; prose does not."""
    return "(" in text and ")" in text and ("=" in text or "return " in text)


def test_the_checks_of_a_translation_can_fail() -> None:
    assert not looks_like_code("keep the k largest logits")
    assert fields("off by {error:.3g} at {where}") != fields("偏差 {error:.3g}")
    assert set(NUMBER.findall("k = 1 keeps 2")) != set(NUMBER.findall("k = 1 保留"))
    assert set(CODE_SPAN.findall("use `dim=-1`")) != set(CODE_SPAN.findall("用 dim=-1"))


def test_the_language_comes_from_the_option_the_setting_or_the_locale(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("GPT_KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    assert locale.language() == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert locale.language() == "zh"
    monkeypatch.setenv("LC_ALL", "C")  # LC_ALL first, as gettext reads them
    assert locale.language() == "en"
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    assert locale.language() == "zh"
    monkeypatch.setenv("GPT_KATA_LANG", "klingon")  # one the kata does not speak
    assert locale.language() == "en"
    assert locale.code_of("zh-Hans") == "zh" and locale.code_of("fr_FR") is None


def test_a_text_with_no_translation_is_shown_in_english(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    assert locale.tr("no such text {n}", n=3) == "no such text 3"
    assert locale.translated("") == ""


def kata_command(*args: str, cwd: Path, language: str = "zh") -> str:
    done = subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd,
                          capture_output=True, text=True, encoding="utf-8", timeout=300,
                          env={**_env(), "GPT_KATA_LANG": language})
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LANG", "LC_MESSAGES")}


def test_list_speaks_chinese_for_every_problem(tmp_path: Path) -> None:
    from learner import learner_kata

    from grader.registry import problems

    kata = learner_kata(tmp_path)
    shown = kata_command("--lang", "zh", "list", cwd=kata)
    zh = catalog_of("problems")
    for problem in problems():
        assert zh[problem.title] in shown, problem.slug
        assert zh[problem.track] in shown
    assert "README.zh.md" in shown
    english = kata_command("list", cwd=kata, language="en")
    assert problems()[0].title in english and not CHINESE.search(english)


def test_hint_speaks_chinese_for_every_problem(tmp_path: Path) -> None:
    from learner import learner_kata

    from grader.registry import problems

    kata = learner_kata(tmp_path)
    zh = catalog_of("problems")
    # One process asks for every problem's first hint, as 35 commands would, each
    # between two markers.
    slugs = [p.slug for p in problems()]
    done = subprocess.run(
        [sys.executable, "-c", "import sys\nfrom grader.cli.main import main\n"
         f"for slug in {slugs!r}:\n"
         "    print('@@', slug, flush=True)\n"
         "    main(['--lang', 'zh', 'hint', slug])\n"],
        cwd=kata, capture_output=True, text=True, encoding="utf-8", timeout=300, env=_env())
    assert done.returncode == 0, done.stderr
    said = dict(part.split("\n", 1) for part in done.stdout.split("@@ ")[1:])
    for problem in problems():
        shown = said[problem.slug]
        assert zh[problem.hints[0]] in shown, problem.slug
        assert CHINESE.search(shown.splitlines()[0]), shown  # "提示 1/3" and the like


def first_of_each_track() -> list[Problem]:
    from grader.registry import problems

    return list({problem.track: problem for problem in reversed(problems())}.values())


@dataclass(frozen=True)
class ChineseGrade:
    kata: Path
    slugs: tuple[str, ...]
    shown: str


@pytest.fixture(scope="module")
def chinese_grade(tmp_path_factory: pytest.TempPathFactory) -> ChineseGrade:
    """One Chinese grade that the tests below read each their problem's part of (a
    grade command costs seconds): a top-k with a known mistake, a softmax with no
    class, and the first starter of each track."""
    from learner import learner_kata

    kata = learner_kata(tmp_path_factory.mktemp("chinese"))
    reference = (ROOT / "solutions" / "09-top-k" / "solution.py").read_text()
    wrong = reference.replace('float("-inf")', "0.0")
    assert wrong != reference
    (kata / "problems" / "09-top-k" / "solution.py").write_text(wrong)
    (kata / "problems" / "03-softmax" / "solution.py").write_text("x = 1\n")
    slugs = (*(problem.slug for problem in first_of_each_track()), "softmax", "top-k")
    assert len(set(slugs)) == len(slugs)
    return ChineseGrade(kata, slugs, kata_command("grade", *slugs, cwd=kata))


def test_a_chinese_grade_names_the_mistake_in_chinese(chinese_grade: ChineseGrade) -> None:
    kata, shown = chinese_grade.kata, chinese_grade.shown
    name = "set removed logits to 0 instead of -inf"
    chinese_name = catalog_of("mistakes")[name]
    assert chinese_name in shown and name not in shown
    assert catalog_of("checks")["Top-k of fixed logits: ties, -inf, k = 1, k >= vocab_size, "
                                "batches"] in shown
    assert "README.zh.md" in shown
    fix = kata_command("hint", "top-k", cwd=kata)
    assert catalog_of("mistakes")["a logit of 0 still has a probability; removed tokens "
                                  "need float('-inf')"] in fix


def catalog_of(name: str) -> dict[str, str]:
    return {e.msgid: e.msgstr for e in entries(name)}


def test_the_worker_speaks_the_learners_language(chinese_grade: ChineseGrade,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """What the sandboxed worker says of the learner's code (here: no class to grade)
    reads in their language: the worker's clean environment carries the language's
    code, and nothing else of the grader's."""
    from grader.sandbox.worker.layers.policy import clean_environment

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    assert clean_environment()["GPT_KATA_LANG"] == "zh"
    monkeypatch.setenv("GPT_KATA_LANG", "zh; rm -rf /")  # only a code the kata speaks
    assert clean_environment()["GPT_KATA_LANG"] == "en"
    said = catalog_of("messages")["no class {name} in {file}"].format(
        name="Solution", file="solution.py")
    line = next(x for x in chinese_grade.shown.splitlines() if "03-softmax" in x)
    assert said in line, chinese_grade.shown


def test_a_chinese_grade_of_starters_says_not_implemented_in_chinese(
        chinese_grade: ChineseGrade) -> None:
    """The first starter of each track: the message is one text, whatever the problem
    (test_grading.py grades every starter in English, in process)."""
    firsts = first_of_each_track()
    assert len(firsts) == 4
    shown = chinese_grade.shown
    said = catalog_of("messages")["not implemented yet (the starter still raises "
                                  "NotImplementedError)"]
    for problem in firsts:
        line = next(x for x in shown.splitlines() if problem.folder in x)
        assert said in line, line
    # None of the grade's problems passes: the starters, and the two written wrong.
    assert f"0/{len(chinese_grade.slugs)} 道题通过" in shown


def test_talk_speaks_chinese(tmp_path: Path) -> None:
    """Around the model's English text, talk's own words are Chinese: here, that it
    grades the learner's sampler first, and whose sampler wrote the text."""
    from learner import learner_kata

    kata = learner_kata(tmp_path)
    done = subprocess.run([sys.executable, "-m", "grader", "talk", "--chars", "20", "--seed",
                           "1"], cwd=kata, capture_output=True, text=True, encoding="utf-8",
                          timeout=300, env={**_env(), "GPT_KATA_LANG": "zh"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Once upon a time,")  # the model's own words
    said = done.stderr.strip().splitlines()  # talk's, on stderr: whose sampler wrote it
    assert said and all(CHINESE.search(line) for line in said), done.stderr


@pytest.mark.parametrize("name", ["nope", "zzzzzz"])
def test_a_problem_not_found_is_said_in_chinese(name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Both ways of saying a name is no problem's: with the nearest names, and with all."""
    from grader.registry import find

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    with pytest.raises(LookupError, match=f"没有叫 '{name}' 的题目"):
        find(name)


def test_a_windows_locale_is_read_where_no_variable_names_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows sets none of LANG and the rest: its own locale ("zh-CN") decides."""
    for variable in ("GPT_KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(locale, "system_locale", lambda: "zh-CN")
    assert locale.language() == "zh"
    monkeypatch.setattr(locale, "system_locale", lambda: "")
    assert locale.language() == "en"
    monkeypatch.setenv("LANG", "en_US.UTF-8")  # a variable set still decides
    monkeypatch.setattr(locale, "system_locale", lambda: "zh-CN")
    assert locale.language() == "en"


def test_the_sandbox_notice_speaks_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    from grader.learner.sandbox_notice import layers_line, unsandboxed

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    pool = type("Pool", (), {"sandbox": None, "use_fork": True})()
    assert "沙箱" in unsandboxed(pool)  # type: ignore[arg-type]
    assert "沙箱" in (layers_line(["landlock-abi7"]) or "")


def test_a_run_folder_that_cannot_be_talked_with_is_said_in_chinese(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`talk --model RUN` checks the run's files before anything runs; each reason it
    refuses one reads in Chinese around the paths and the files' own names."""
    import json

    from grader.model.runs import RunError, read_config, read_vocab, run_files

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    sizes = {"vocab_size": 3, "context_length": 4, "n_layer": 1, "n_head": 2, "n_embd": 4}

    def folder(name: str, files: dict[str, str]) -> Path:
        made = tmp_path / name
        made.mkdir()
        for file, text in files.items():
            (made / file).write_text(text, encoding="utf-8")
        return made

    vocab = json.dumps({"0": "a", "1": "b", "2": "c"})
    config = json.dumps(sizes)
    refused = {
        "nowhere": lambda: run_files(tmp_path / "nowhere"),
        "a-file": lambda: run_files(tmp_path / "a-file.txt"),
        "failed": lambda: run_files(folder("failed", {"failed.txt": "out of memory"})),
        "unfinished": lambda: run_files(folder("unfinished", {"loss_log.tsv": ""})),
        "not-a-run": lambda: run_files(folder("empty", {})),
        "vocab-short": lambda: run_files(folder("short", {
            "config.json": json.dumps({**sizes, "vocab_size": 5}), "vocab.json": vocab,
            "model.safetensors": ""})),
        "not-json": lambda: read_config(folder("bad", {"c.json": "{"}) / "c.json"),
        "unknown-sizes": lambda: read_config(folder("odd", {"c.json": "{}"}) / "c.json"),
        "not-whole": lambda: read_config(folder("half", {"c.json": json.dumps(
            {**sizes, "n_layer": 1.5})}) / "c.json"),
        "not-a-multiple": lambda: read_config(folder("heads", {"c.json": json.dumps(
            {**sizes, "n_head": 3})}) / "c.json"),
        "ids": lambda: read_vocab(folder("ids", {"v.json": json.dumps({"1": "a"})}) / "v.json"),
        "twice": lambda: read_vocab(folder("twice", {"v.json": json.dumps(
            {"0": "a", "1": "a"})}) / "v.json"),
    }
    (tmp_path / "a-file.txt").write_text(config)
    for name, refuse in refused.items():
        with pytest.raises(RunError) as raised:
            refuse()
        said = str(raised.value).replace(str(tmp_path), "")
        assert CHINESE.search(said), (name, said)
        prose = re.sub(r"`[^`]*`|\S*[._/]\S*|\w+_\w+", "", said)
        assert not re.search(r"[A-Za-z]{3,} [A-Za-z]{2,}", prose), (name, said)


def test_a_checks_title_is_said_in_chinese_with_its_case(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A report names a check by its title and the case it ran ("[1.5]"): the title is
    translated whole, a bracket of its own included."""
    from grader.reports.report import check_title

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    zh = catalog_of("checks")
    title = "top_p outside [0, 1] raises ValueError"
    assert check_title(f"{title} [1.5]") == f"{zh[title]} [1.5]"
    assert check_title(f"{title} [-0.1]") == f"{zh[title]} [-0.1]"
    assert check_title(title) == zh[title]
    assert check_title("k < 1 raises ValueError") == zh["k < 1 raises ValueError"]
    # The case is found as the last bracket, since no title ends with one.
    assert not [t for t in catalogs.texts("checks") if t.endswith("]")]


def test_the_models_refusal_of_a_long_context_is_said_in_chinese(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the kata's models raise into a learner's code that gives them more tokens than
    their window, or no token ids, reads in Chinese; problem 15's diagnosis still knows
    the window's error, in either language."""
    import torch

    from grader.checks.kv_cache.check_kv_cache import fallback_hint
    from grader.grading.judging.refusals import says_too_long
    from grader.grading.subject.kata import Call
    from grader.model.config import GPTConfig, LlamaConfig
    from grader.model.gpt import GPT
    from grader.model.llama import Llama

    sizes = {"vocab_size": 5, "context_length": 4, "n_layer": 1, "n_head": 2, "n_embd": 8}
    english = []
    for language in ("en", "zh"):
        monkeypatch.setenv("GPT_KATA_LANG", language)
        for model in (GPT(GPTConfig(**sizes)), Llama(LlamaConfig(**sizes, n_kv_head=1))):
            with pytest.raises(ValueError) as long:
                model(torch.zeros(1, 5, dtype=torch.long))
            with pytest.raises(ValueError) as floats:
                model(torch.zeros(1, 3))
            said = [str(long.value), str(floats.value)]
            if language == "en":
                english += said
                assert "crop the context to its last 4 tokens" in said[0]
            else:
                assert all(CHINESE.search(s) for s in said), said
                assert not set(said) & set(english)
            assert says_too_long(f"ValueError: {said[0]}") and not says_too_long(said[1])
            call = Call("generate_cached", (), {}, ("error", f"ValueError: {said[0]}"), None)
            assert fallback_hint(call), said[0]  # type: ignore[arg-type]


def test_a_copys_stored_refusal_is_the_learners_in_their_language(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A learners' copy stores its answers' errors as it was written (in English, say),
    and compares them with what the learner's call raised: the model's refusal said in
    Chinese is the same refusal, with the same numbers, and no other."""
    from grader.model.config import not_token_ids, too_long
    from grader.release.practice.judge import same_outcome

    stored = ("error", f"ValueError: {too_long(48, 49)}")
    stored_ids = ("error", f"ValueError: {not_token_ids('torch.float32 of shape (1, 3)')}")
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    said = ("error", f"ValueError: {too_long(48, 49)}")
    assert CHINESE.search(said[1]) and said != stored
    assert same_outcome(said, stored) and same_outcome(stored, said)
    assert not same_outcome(("error", f"ValueError: {too_long(48, 50)}"), stored)
    assert not same_outcome(("error", f"RuntimeError: {too_long(48, 49)}"), stored)
    assert same_outcome(("error", f"ValueError: {not_token_ids('torch.float32 of shape (1, 3)')}"),
                        stored_ids)
    assert not same_outcome(said, stored_ids)


def test_the_witness_refuses_a_misused_model_call_in_chinese(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the witness's model (the one a check's hidden model runs in) says of a call
    the model would not take reaches the learner's code in Chinese, as the GPT's own
    refusals do; the learners' copy's model says the same of a context with no tokens,
    and a copy knows that refusal in either language."""
    from types import SimpleNamespace

    import torch

    from grader.model.artifacts import random_model
    from grader.release.practice.codec import ExportedGPT
    from grader.release.practice.judge import same_outcome
    from grader.sandbox.host.witness import expect_cache, expect_context

    sizes = {"vocab_size": 10, "context_length": 6, "n_layer": 2, "n_head": 2, "n_embd": 8}
    model = random_model(sizes, 3)
    _, cache = model.forward_with_cache(torch.zeros(1, 3, dtype=torch.long))
    misuses = {
        "a batch too large": lambda: expect_context(model, torch.zeros(65, 1, dtype=torch.long)),
        "no tokens": lambda: expect_context(model, torch.zeros(1, 0, dtype=torch.long)),
        "floats": lambda: expect_context(model, torch.zeros(1, 2)),
        "a list": lambda: expect_context(model, [[1, 2]]),
        "one layer": lambda: expect_cache(model, torch.tensor([[1]]), cache[:1]),
        "not a pair": lambda: expect_cache(model, torch.tensor([[1]]), [[k] for k, _ in cache]),
        "doubles": lambda: expect_cache(model, torch.tensor([[1]]),
                                        [[k.double(), v] for k, v in cache]),
        "two rows": lambda: expect_cache(model, torch.tensor([[1], [2]]), cache),
        "the copy's, no tokens": lambda: ExportedGPT.check(
            SimpleNamespace(context_length=6, calls=None),  # type: ignore[arg-type]
            torch.zeros(1, 0, dtype=torch.long), 0),
    }
    said: dict[str, dict[str, str]] = {}
    for language in ("en", "zh"):
        monkeypatch.setenv("GPT_KATA_LANG", language)
        for name, misuse in misuses.items():
            with pytest.raises(ValueError) as refused:
                misuse()
            said.setdefault(name, {})[language] = str(refused.value)
    for name, words in said.items():
        assert not CHINESE.search(words["en"]) and CHINESE.search(words["zh"]), (name, words)
    assert "a batch of 65 rows; this model takes 1 to 64" in said["a batch too large"]["en"]
    assert "65" in said["a batch too large"]["zh"] and "64" in said["a batch too large"]["zh"]
    assert said["no tokens"] == said["the copy's, no tokens"]
    assert "torch.float32 of shape (1, 2)" in said["floats"]["zh"]
    assert "torch.float32" in said["doubles"]["zh"] and "键" in said["doubles"]["zh"]
    assert same_outcome(("error", f"ValueError: {said['no tokens']['zh']}"),
                        ("error", f"ValueError: {said['no tokens']['en']}"))


def test_a_broken_install_is_said_in_chinese(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from grader.model import artifacts

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    for missing in (lambda: artifacts._read_json(tmp_path / "config.json"),
                    lambda: artifacts._weights_of(tmp_path / "model.safetensors")):
        with pytest.raises(artifacts.MissingDataError) as raised:
            missing()
        said = str(raised.value).replace(str(tmp_path), "")
        assert CHINESE.search(said) and "reinstall" not in said, said
