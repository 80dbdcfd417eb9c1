"""The command line's rough edges: names, suggestions, report paths, help, plain output.

Everything here stops at a usage error or runs a command that does not grade, so
it takes seconds, not the minutes of a grade.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, examples
from learner import learner_kata


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


def refused(done: subprocess.CompletedProcess, words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert words in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "grading" not in done.stdout  # refused before any grading started


@pytest.mark.parametrize("name", ["generate", "6", "06", "06-generate", "problems/06-generate/",
                                  "problems/06-generate/solution.py", "./problems/06-generate"])
def test_a_problem_is_found_by_any_of_its_names(name):
    # two problems for one file: refused only after both names were found
    done = cli("grade", name, "decode", "--submission",
               str(examples("generate") / "well_known_style.py"))
    refused(done, "name exactly one")


@pytest.mark.parametrize("args, suggestion", [
    (["grade", "genrate"], "did you mean generate?"),
    (["grade", "topk"], "did you mean top-k or top-p?"),
    (["hint", "sampel"], "did you mean sample or sampler?"),
    (["reset", "problems/07-gredy/", "--yes"], "did you mean greedy?"),
    # the start of a word of the name
    (["hint", "crop"], "did you mean crop-context?"),
    (["watch", "attention"],
     "did you mean attention-head, multi-head-attention or grouped-query-attention?"),
    (["grade", "top"], "did you mean top-k, top-p or top-k-top-p?"),
])
def test_a_near_miss_name_gets_suggestions(args, suggestion):
    refused(cli(*args), suggestion)


def test_a_name_far_from_any_lists_the_problems():
    refused(cli("grade", "zzzz"), "the problems are: crop-context, last-logits")


def test_report_paths_are_checked_before_grading(tmp_path):
    refused(cli("grade", "decode", "--reference", "--json", str(tmp_path)), "is a folder")
    refused(cli("grade", "decode", "--reference", "--json", f"{tmp_path}/new/"), "is a folder")
    refused(cli("grade", "decode", "--reference", "--json",
                str(tmp_path / "missing" / "report.json")), "there is no folder")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("")
    refused(cli("grade", "decode", "--reference", "--junit", str(a_file / "report.xml")),
            "there is no folder")


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0,
                    reason="needs POSIX permissions that apply (root may write anywhere)")
def test_an_unwritable_report_path_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        refused(cli("grade", "decode", "--reference", "--json", str(locked / "r.json")),
                "not allowed to write")
    finally:
        locked.chmod(0o700)


def value_options(parser: argparse.ArgumentParser
                  ) -> Iterator[tuple[str, tuple[str, bool]]]:
    """(subcommand and option, (its help as shown, whether it is required)) for every
    option that takes a value."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from ((f"{name} {o}", h) for o, h in value_options(sub))
        elif action.option_strings and action.nargs != 0:
            yield action.option_strings[-1], (parser.formatter_class(
                parser.prog)._get_help_string(action) or "", action.required)


def test_every_option_that_takes_a_value_shows_its_default():
    from grader.cli.main import build_parser

    options = dict(value_options(build_parser()))
    assert "train --steps" in options and "talk --chars" in options
    missing = [option for option, (text, required) in options.items()
               if "default" not in text and not required]
    assert not missing, f"these options' help does not show their default: {missing}"
    # One that must be given has none: gradebook's --out said "(default: none)".
    required = [option for option, (text, required) in options.items() if required]
    assert "gradebook --out" in required
    said = [option for option in required if "default" in options[option][0]]
    assert not said, f"these options must be given, yet their help shows a default: {said}"
    done = cli("train", "--help")
    assert "(default: 3000;" in done.stdout and "(default: 0)" in done.stdout


def test_output_is_not_wrapped_when_it_is_not_a_terminal():
    words = " ".join(f"word{i}" for i in range(60))
    done = subprocess.run([sys.executable, "-c", "from grader.learner.output import console; "
                           f"console().print({words!r})"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "80"})
    assert done.stdout == words + "\n"


def test_talk_says_whose_code_runs_before_the_prompt(tmp_path):
    # in a fresh learner's folder: whose generate() runs depends on the learner's status
    done = subprocess.run([sys.executable, "-m", "grader", "talk", "Tom", "--chars", "5"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=300, cwd=learner_kata(tmp_path))
    assert done.returncode == 0, done.stdout
    # a fresh folder has no status yet: its 06 is graded first, in a line of its own;
    # the text follows the label, and may itself hold a newline (the seed is random)
    lines = done.stdout.rstrip("\n").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("["))
    notes, label, text = lines[:at], lines[at], "\n".join(lines[at + 1:])
    assert all(note.startswith("(") for note in notes), notes
    # whose function, from which problem: "[the reference sample_text() from 16-sampler..."
    assert label.startswith("[") and re.search(r"\w+\(\) from \d\d-[a-z-]+", label), label
    assert text.startswith("Tom") and len(text) == 8


def test_train_without_a_terminal_prints_progress_lines(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Tom had a red ball. Lily saw the cat.\n" * 40, encoding="utf-8")
    done = cli("train", "--corpus", str(corpus), "--out", str(tmp_path / "run"),
               "--steps", "2")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("step ")]
    # One line at each evaluation, with its losses, at the start and the end.
    evaluations = [line for line in lines if "loss" in line]
    assert [line.split()[1] for line in evaluations] == ["0/2", "2/2"]
    assert all("elapsed" in line and "ETA" not in line for line in evaluations)
    # And one at each tenth of the steps, with the time left: with two steps, each step
    # is five tenths.
    steps = [line for line in lines if "since the first step" in line]
    assert [line.split()[1] for line in steps] == ["1/2", "2/2"]
    assert all("ETA" in line for line in steps) and len(lines) == 4, lines


def test_train_defaults_are_the_train_settings():
    from grader.cli.main import build_parser
    from grader.learner.training.command import train_steps_and_threads
    from grader.model.config import MODERN_SETTINGS, TrainSettings

    args = build_parser().parse_args(["train"])
    assert train_steps_and_threads(args) == (TrainSettings().steps, TrainSettings().threads)
    # --model modern trains as the shipped modern model was trained
    args = build_parser().parse_args(["train", "--model", "modern"])
    assert train_steps_and_threads(args) == (MODERN_SETTINGS.steps, MODERN_SETTINGS.threads)
    args = build_parser().parse_args(["train", "--model", "modern", "--steps", "7"])
    assert train_steps_and_threads(args) == (7, MODERN_SETTINGS.threads)


@pytest.mark.parametrize("model", ["gpt", "modern"])
@pytest.mark.parametrize("steps", ["0", "-1"])
def test_train_refuses_fewer_than_one_step_before_writing_a_run(model, steps, tmp_path):
    """Without --yours as with it: a run of no step was written untrained, and talk
    took it."""
    from grader.cli.main import main

    out = tmp_path / "run"
    assert main(["train", "--model", model, "--steps", steps, "--out", str(out)]) == 2
    assert not out.exists()


@pytest.mark.parametrize("form", ["folder", "file"])
def test_a_classroom_grade_refuses_a_link_to_the_references(form: str, tmp_path: Path) -> None:
    """A learner's repository may commit solution.py as a link to the grader's own
    reference; a classroom grade refuses it before grading, as the gradebook does."""
    folder = tmp_path / "problems" / "01-crop-context"
    folder.mkdir(parents=True)
    link = folder / "solution.py"
    link.symlink_to(ROOT / "solutions" / "01-crop-context" / "solution.py")
    target = tmp_path / "problems" if form == "folder" else link
    done = cli("grade", "crop-context", "--classroom", "--allow-unisolated", "--submission",
               str(target))
    refused(done, "is a link out of the learner's folder; classroom mode grades only")
    # Outside classroom mode a learner grading a link grades only themselves.
    assert cli("grade", "crop-context", "--submission", str(target), "-q").returncode == 0


def test_a_path_in_a_usage_error_is_shown_not_obeyed() -> None:
    done = cli("grade", "softmax", "--submission", "/nonexistent/x\x1b[2K\x1b[32mpass.py")
    refused(done, "--submission /nonexistent/x\\x1b[2K\\x1b[32mpass.py: no such file")
    assert "\x1b" not in done.stderr


def test_a_classroom_grade_refuses_a_solution_the_gradebook_would_not_read(
        tmp_path: Path) -> None:
    """Over a megabyte, as the gradebook refuses it: one rule, one score on every path."""
    folder = tmp_path / "problems" / "01-crop-context"
    folder.mkdir(parents=True)
    reference = (ROOT / "solutions" / "01-crop-context" / "solution.py").read_text("utf-8")
    (folder / "solution.py").write_text(reference + "#" * 1_000_001 + "\n", "utf-8")
    done = cli("grade", "crop-context", "--classroom", "--allow-unisolated", "--submission",
               str(tmp_path / "problems"))
    refused(done, "is larger than 1000000 bytes; classroom mode grades only")


@pytest.mark.parametrize("argv", [["talk", "--prompt", "x"], ["grade", "--bogus"]])
def test_a_learners_command_line_error_shows_every_command(argv, capsys) -> None:
    """A learner's command is parsed without the commands that live in modules of
    their own; its errors still show the usage with all of them."""
    from grader.cli.main import before_the_command, build_parser

    with pytest.raises(SystemExit) as exit_:
        build_parser(before_the_command(argv)[1]).parse_args(argv)
    assert exit_.value.code == 2
    usage = capsys.readouterr().err
    assert "unrecognized arguments" in usage
    for command in ("trace", "gradebook", "release", "talk", "train"):
        assert command in usage.split("error:")[0]


@pytest.mark.parametrize("argv, named", [
    (["gradebook", "class", "--out", "grades", "crop-context", "softmax"],
     {"roster": "class", "out": "grades", "problems": ["crop-context", "softmax"]}),
    (["similarity", "class", "--out", "alike", "decode"],
     {"out": "alike", "problems": ["decode"]}),
    (["grade", "6", "--json", "r.json", "7"], {"problems": ["6", "7"], "json": "r.json"}),
    (["trace", "generate", "--steps", "5", "Tom"], {"prompt": "Tom", "steps": 5}),
])
def test_a_commands_options_may_stand_between_its_positionals(argv, named) -> None:
    """As an instructor writes `gradebook ROSTER --out DIR PROBLEM`: argparse alone took
    the roster, then left the problems "unrecognized" under the whole parser's usage."""
    from grader.cli.main import build_parser

    args = build_parser().parse_args(argv)
    assert {name: getattr(args, name) for name in named} == named


@pytest.mark.parametrize("command", ["list", "grade", "watch", "hint", "reset", "trace", "talk",
                                     "train", "gradebook", "gradescope", "similarity",
                                     "release"])
@pytest.mark.parametrize("language, asked", [("en", "--help"), ("zh", "-h"), ("en", "--hel")])
def test_every_commands_help_is_shown(command, language, asked, capsys, monkeypatch) -> None:
    """Help is parsed in argparse's own pass: the intermixed one hides a positional's
    default, and talk's prompt, whose help shows it, failed with a KeyError (argparse
    takes an abbreviated --help too)."""
    from grader.cli.main import build_parser

    monkeypatch.setenv("GPT_KATA_LANG", language)
    with pytest.raises(SystemExit) as exit_:
        build_parser(command).parse_args([command, asked])
    assert exit_.value.code == 0
    assert f"gpt-kata {command}" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["trace", "--help"], ["trace"]])
def test_a_chinese_usage_names_the_command_whole(argv, capsys, monkeypatch) -> None:
    """trace takes its options among its positionals (argparse's intermixed parsing),
    whose usage argparse keeps by cutting off seven characters, English's "usage: ":
    in Chinese its usage, in help and in errors alike, still begins with the command."""
    from grader.cli.main import build_parser

    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    with pytest.raises(SystemExit):
        build_parser("trace").parse_args(argv)
    said = capsys.readouterr()
    assert (said.out + said.err).startswith("用法：gpt-kata trace [-h]"), said


def test_the_language_and_the_command_are_found_before_the_command() -> None:
    from grader.cli.main import before_the_command

    assert before_the_command(["--lang", "zh", "grade", "6"]) == ("zh", "grade")
    assert before_the_command(["--lang=zh", "talk"]) == ("zh", "talk")
    assert before_the_command(["-h", "grade"]) == (None, None)  # the whole parser's help
    assert before_the_command(["-h", "--lang", "zh"]) == ("zh", None)  # help, in Chinese
    # After the command it is the same option; the last one given counts, as argparse's.
    assert before_the_command(["grade", "6", "--lang", "zh"]) == ("zh", "grade")
    assert before_the_command(["--lang", "zh", "list", "--lang=en"]) == ("en", "list")
    assert before_the_command(["talk", "--", "--lang", "zh"]) == (None, "talk")  # its text
    assert before_the_command(["--lang"]) == (None, None)
    assert before_the_command([]) == (None, None)


@pytest.mark.parametrize("argv", [["list", "--lang", "zh"], ["--lang", "en", "list", "--lang=zh"]])
def test_the_language_may_follow_the_command(argv, capsys, monkeypatch) -> None:
    """`gpt-kata list --lang zh` speaks Chinese, as `gpt-kata --lang zh list` does."""
    from grader.cli.main import main

    monkeypatch.setenv("GPT_KATA_LANG", "en")
    assert main(argv) == 0
    assert "题" in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["removed", "a folder"])
def test_a_missing_solution_file_is_named_with_the_way_back(kind, tmp_path):
    """A learner who removed their file, or made a folder of its name, is told which
    and how to put the starter back, not to run the grader in their kata folder."""
    kata = learner_kata(tmp_path)
    file = kata / "problems" / "03-softmax" / "solution.py"
    file.unlink()
    if kind == "a folder":
        file.mkdir()
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "3", "4"], cwd=kata,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert ("problems/03-softmax/solution.py missing or not a file: `gpt-kata reset "
            "softmax` puts the starter back") in done.stderr


@pytest.mark.parametrize("argv", [["--help"], ["--lang", "zh", "hint", "3"]])
def test_a_console_without_chinese_gets_escapes_not_a_crash(argv, tmp_path) -> None:
    """A Windows console piped to a file writes cp1252: the help's 中文 and a Chinese
    hint, printed before any rich console, came out as a UnicodeEncodeError."""
    done = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=learner_kata(tmp_path),
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "cp1252"})
    assert done.returncode == 0, done.stderr.decode("cp1252", "replace")
    assert b"\\u" in done.stdout  # the characters cp1252 lacks, as escapes


def test_talk_says_when_the_learners_own_file_fails_and_the_reference_talks(tmp_path):
    # The label names the reference; a learner who wrote 16 took the text for theirs.
    kata = learner_kata(tmp_path)
    (kata / "problems" / "16-sampler" / "solution.py").write_text(
        "class Solution:\n    def sample_text(self, *args, **kwargs):\n"
        "        return 'not yet'\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "grader", "talk", "Tom", "--chars", "5",
                           "--seed", "1"], capture_output=True, text=True, timeout=300,
                          cwd=kata)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("(your 16-sampler does not pass yet, so the reference's talks instead; "
            "`gpt-kata grade sampler` says why)") in done.stderr, done.stderr
    assert "[the reference sample_text() from 16-sampler" in done.stdout + done.stderr
