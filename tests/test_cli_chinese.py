"""The command line in Chinese: every command's help, the instructor's too, and
argparse's own words ("usage:", "options", its errors), while argparse everywhere
else in the process keeps its own (grader/locale/parsers.py).

Each stops at a help or a usage error: seconds, no grade.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import threading
from pathlib import Path

import pytest

from grader.cli.main import build_parser, main
from grader.locale import catalog
from grader.locale.parsers import ARGPARSE_TEXTS, in_the_language

CHINESE = re.compile(r"[\u4e00-\u9fff]")
# argparse's English words for a command line's user, as 3.10 to 3.14 print them.
ARGPARSE_ENGLISH = ("usage:", "positional arguments", "options:", "show this help",
                    "error:", "the following arguments are required", "invalid choice",
                    "unrecognized arguments", "expected one argument", "argument --",
                    "(default:", "choose from")
# What argparse says only of a program's own mistakes (a parser built wrong, an
# option named twice), never of a command line: no user of the kata meets them.
PROGRAMMERS_ONLY = {
    "%r is not callable", "'required' is an invalid argument for positionals",
    ".__call__() not defined", 'argument "-" with mode %r',
    "cannot have multiple subparser arguments", "cannot merge actions - two groups are named %r",
    "conflicting option string: %s", "conflicting option strings: %s",
    "conflicting subparser: %s", "conflicting subparser alias: %s",
    "dest= is required for options like %r", "invalid conflict_resolution value: %r",
    "invalid option string %(option)r: must start with a character %(prefix_chars)r",
    "mutually exclusive arguments must be optional", "unexpected option string: %s",
}
PLACEHOLDER = re.compile(r"%(?:\([a-z_]+\))?[sr]")


def argparse_texts() -> set[str]:
    """Every literal text the running Python's argparse asks gettext for."""
    tree = ast.parse(Path(argparse.__file__).read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            count = {"_": 1, "ngettext": 2}.get(node.func.id, 0)
            found |= {arg.value for arg in node.args[:count]
                      if isinstance(arg, ast.Constant) and isinstance(arg.value, str)}
    return found


def test_every_text_argparse_says_to_a_user_has_its_chinese() -> None:
    """The running Python's argparse (the wording differs from 3.10 to 3.14) asks for
    no text the kata's list lacks, and each has a Chinese with argparse's %-fields."""
    texts = argparse_texts()
    assert len(texts) > 30, texts  # argparse's texts were found at all
    missing = texts - set(ARGPARSE_TEXTS) - PROGRAMMERS_ONLY
    assert not missing, f"argparse {sys.version_info[:2]} says texts the kata lacks: {missing}"
    chinese = catalog("zh")
    for text in ARGPARSE_TEXTS:
        said = chinese.get(text, "")
        assert CHINESE.search(said) or text == "%(heading)s:", (text, said)
        assert PLACEHOLDER.findall(said) == PLACEHOLDER.findall(text), (text, said)
        assert said.endswith("\n") == text.endswith("\n"), (text, said)


def test_every_commands_help_is_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command's line in `gpt-kata --help` (which every learner reads, the
    instructor's commands' too), and every argument's help of every command."""
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    english = [f"gpt-kata --help: {a.dest}: {a.help}" for a in sub._choices_actions
               if not CHINESE.search(a.help or "")]
    for name, command in sub.choices.items():
        english += [f"gpt-kata {name}: {'/'.join(a.option_strings) or a.dest}: {a.help}"
                    for a in command._actions
                    if a.help != argparse.SUPPRESS and not CHINESE.search(a.help or "")]
        english += [f"gpt-kata {name}: {group.title}" for group in command._action_groups
                    if group._group_actions and not CHINESE.search(group.title or "")]
    assert not english, "\n".join(english)


@pytest.mark.parametrize("command", [None, "grade", "trace", "gradebook", "gradescope",
                                     "similarity", "release", "talk", "train"])
def test_a_commands_help_holds_none_of_argparses_english(
        command: str | None, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPT_KATA_LANG", "")  # undone after the test, as `main` sets it
    with pytest.raises(SystemExit) as exit_:
        main(["--lang", "zh", *([command] if command else []), "--help"])
    assert exit_.value.code == 0
    said = capsys.readouterr().out
    assert said.startswith(f"用法：gpt-kata {command or ''}".rstrip()), said
    assert "选项" in said and "显示本帮助并退出" in said, said
    # a section's title ends with a Chinese colon, whichever Python's argparse wrote it
    assert "\n选项：\n" in said and "选项:" not in said, said
    assert not [words for words in ARGPARSE_ENGLISH if words in said], said


@pytest.mark.parametrize("command", [None, "grade", "gradebook", "gradescope", "train"])
def test_a_chinese_help_fits_the_terminals_columns(
        command: str | None, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal gives a Chinese character two columns: a help wrapped by its count of
    characters ran past a 60-column terminal on most lines. Only a word longer than
    the width (the list of commands) may stand past it, as it does in English."""
    from grader.wording import columns

    monkeypatch.setenv("GPT_KATA_LANG", "")
    monkeypatch.setenv("COLUMNS", "60")
    with pytest.raises(SystemExit):
        main(["--lang", "zh", *([command] if command else []), "--help"])
    said = capsys.readouterr().out
    too_wide = [line for line in said.splitlines()
                if columns(line) > 60 and " " in line.strip()]
    assert not too_wide, "\n".join(too_wide)
    assert sum(1 for line in said.splitlines() if CHINESE.search(line)) > 3, said


@pytest.mark.parametrize("command", ["grade", "gradebook", "similarity"])
@pytest.mark.parametrize("width", [80, 60])
def test_a_chinese_usages_lines_stand_under_its_first(
        command: str, width: int, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """"用法：" takes six columns, where "usage: " takes seven characters: the lines of a
    usage below its first start where the first line's options start, as in English,
    and the first line fits the terminal too."""
    from grader.wording import columns

    monkeypatch.setenv("GPT_KATA_LANG", "")
    monkeypatch.setenv("COLUMNS", str(width))
    with pytest.raises(SystemExit):
        main(["--lang", "zh", command, "--help"])
    first, *rest = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert rest, first  # the usage is long enough to be wrapped at all
    options_start = columns(f"用法：gpt-kata {command} ")
    assert first.startswith(f"用法：gpt-kata {command} [-h]"), first
    assert columns(first) <= width - 2, first  # argparse leaves two columns spare
    for line in rest:
        assert len(line) - len(line.lstrip(" ")) == options_start, (first, line)


@pytest.mark.parametrize("argv, chinese", [
    (["bogus"], "gpt-kata：错误：参数 command：无效的选择：'bogus'（可选："),
    (["list", "extra"], "gpt-kata：错误：无法识别的参数：extra"),
    (["gradebook"], "gpt-kata gradebook：错误：缺少必需的参数：--out"),
    (["gradescope", "--out"], "gpt-kata gradescope：错误：参数 --out：需要一个值"),
    (["similarity", "--out", "x"], "gpt-kata similarity：错误：缺少必需的参数：ROSTER"),
    (["release"], "gpt-kata release：错误：缺少必需的参数：OUT"),
    (["grade", "--jobs", "7"], "gpt-kata grade：错误：参数 --jobs：无效的选择：7（可选："),
    (["talk", "--chars", "many"], "gpt-kata talk：错误：参数 --chars：无效的 int 值：'many'"),
    (["gradebook", "--out", "x", "--jobs", "0"],
     "gpt-kata gradebook：错误：参数 --jobs：'0'：至少为 1"),
])
@pytest.mark.parametrize("how", ["--lang", "GPT_KATA_LANG", "LANG"])
def test_a_command_line_error_is_said_in_chinese(
        argv: list[str], chinese: str, how: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the language comes from --lang, the setting or the locale."""
    # set, so that the language `main` sets (in os.environ) is undone after the test
    monkeypatch.setenv("GPT_KATA_LANG", "")
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(variable, raising=False)
    if how == "GPT_KATA_LANG":
        monkeypatch.setenv("GPT_KATA_LANG", "zh")
    elif how == "LANG":
        monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    with pytest.raises(SystemExit) as exit_:
        main(["--lang", "zh", *argv] if how == "--lang" else argv)
    assert exit_.value.code == 2
    said = capsys.readouterr().err
    assert said.startswith("用法：gpt-kata"), said
    error = said.splitlines()[-1]
    assert error.startswith(chinese), error
    assert not [words for words in ARGPARSE_ENGLISH if words in said], said


def test_english_stays_argparses_own(capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPT_KATA_LANG", "en")
    with pytest.raises(SystemExit):
        main(["gradebook"])
    said = capsys.readouterr().err
    assert said.startswith("usage: gpt-kata gradebook [-h] --out DIR")
    assert said.endswith("gpt-kata gradebook: error: the following arguments are required: "
                         "--out\n")


def test_another_parser_keeps_argparses_english(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kata's parsers speak Chinese, and no other: not one built by other code in
    the same process after them, nor one in another thread while they speak."""
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    assert "用法：" in build_parser("list").format_usage()  # argparse has heard the kata

    def plain() -> str:
        other = argparse.ArgumentParser(prog="other")
        other.add_argument("--n", type=int)
        try:
            other.parse_args(["--n", "x"])
        except SystemExit:
            pass
        return other.format_help()

    assert plain().startswith("usage: other [-h] [--n N]\n\noptions:\n")
    seen = []
    with in_the_language():
        assert argparse._("usage: ") == "用法："  # type: ignore[attr-defined]
        thread = threading.Thread(target=lambda: seen.append(plain()))
        thread.start()
        thread.join()
    assert seen[0].startswith("usage: other"), seen
    assert "show this help message and exit" in seen[0]


@pytest.mark.parametrize("argv, chinese", [
    (["gradebook", "--out", "{file}"], "gpt-kata gradebook: --out {file} 是一个文件"),
    (["gradebook", "--out", "{tmp}/book"], "gpt-kata gradebook: 请给出 ROSTER 文件夹"),
    (["gradebook", "{tmp}/nobody", "--out", "{tmp}/book"],
     "gpt-kata gradebook: {tmp}/nobody：没有这个文件夹"),
    (["gradebook", "--out", "{tmp}/book", "--roster", "r.csv", "--late-policy", "latest"],
     "gpt-kata gradebook: --late-policy 需要配合 --deadline"),
    (["gradebook", "--out", "{tmp}/book", "--shard", "5/2"],
     "gpt-kata gradebook：错误：参数 --shard：'5/2'：应为 K/N"),
    (["gradebook", "--out", "{tmp}/book", "--deadline", "2026-12-01T23:59"],
     "gpt-kata gradebook：错误：参数 --deadline：'2026-12-01T23:59'：请写明时区"),
    (["gradescope", "--out", "{tmp}/bundle.tar"],
     "gpt-kata gradescope: --out {tmp}/bundle.tar：Gradescope 只接受 .zip"),
    (["similarity", "{tmp}", "--out", "{tmp}/alike", "--threshold", "2"],
     "gpt-kata similarity: "),
    (["release", "{tmp}"], "gpt-kata release: {tmp} 不是空文件夹"),
])
def test_an_instructors_refusal_is_said_in_chinese(
        argv: list[str], chinese: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    (tmp_path / "file").write_text("not a folder\n", encoding="utf-8")
    fields = {"tmp": str(tmp_path), "file": str(tmp_path / "file")}
    try:
        code = main([arg.format(**fields) for arg in argv])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    said = capsys.readouterr().err
    last = said.splitlines()[-1]
    assert last.startswith(chinese.format(**fields)) and CHINESE.search(last), said


def test_the_gradebooks_table_is_in_chinese(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """What the gradebook shows on the terminal; gradebook.csv keeps its English columns."""
    from grader.classroom.gradebook.outputs import Row, show_table
    from grader.learner.output import console
    from grader.registry import problems

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    chosen = list(problems())[:2]
    row = Row("ada", {p.slug: "pass" for p in chosen}, score=2, max_score=2)
    show_table(console(), [row], chosen, tmp_path)
    said = capsys.readouterr().out
    for chinese in ("学习者", "题目", "得分", "备注", "1 位学习者，2 道题", "已写出"):
        assert chinese in said, said
    assert not re.search(r"\b(learner|problems|score|note|wrote)\b", said), said
