"""`gpt-kata`: list, grade, watch, hint, reset, trace, talk, train.

The parser and the dispatch only: each command lives in a module of its own
(grader/learner/, grader/learner/tools/, grader/learner/training/, and the
instructor's in grader/classroom/ and grader/release/); heavy imports (torch,
pytest) happen inside them, when the command runs.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from grader import paths
from grader.grading.engine.ctrl_c import terminated
from grader.grading.values.sanitise import visible
from grader.learner.commands import hint, list_problems, reset
from grader.learner.errors import EXIT_USAGE, UsageError
from grader.learner.grade import add_grade_arguments, grade
from grader.learner.options import KataParser, positive_count
from grader.learner.output import tolerant_streams
from grader.learner.training.command import (
    MODERN_STEPS,
    MODERN_THREADS,
    TRAIN_STEPS,
    TRAIN_THREADS,
)
from grader.locale import LANGUAGES, code_of, tr, use


def lazily(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """The command `name` of `module`, which is imported only when the command runs."""
    def run(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(module), name)(args)

    return run


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; given the command a command line names, one of the learner's
    commands built here, the parser without the commands that live elsewhere, whose
    modules a `grade` would import for nothing (a tenth of its start-up)."""
    everything = command not in BUILT_HERE
    parser = KataParser(prog="gpt-kata", description=tr(
        "Learn how GPT text generation works by writing it: read a problem in problems/, "
        "edit its solution.py, run `gpt-kata grade`."))
    language_option(parser)
    parser.add_argument("--version", action=VersionAction,
                        help=tr("show the versions of gpt-kata, Python and torch, and exit"))
    if not everything:
        # An error of the command line as a whole shows the whole parser's usage, with
        # every command; building it costs only then.
        parser.error = lambda message: build_parser().error(message)  # type: ignore[method-assign]
    # Every command's parser, including those added elsewhere, shows its defaults and
    # takes its options between its positionals too: `gradebook ROSTER --out DIR 06`
    # left 06 "unrecognized" under the whole parser's usage.
    sub = parser.add_subparsers(dest="command", required=True,
                               parser_class=partial(KataParser, intermixed=True))

    p = sub.add_parser("list", help=tr("the problems, in order, with your status"))
    p.set_defaults(run=list_problems)

    p = sub.add_parser("grade", help=tr("grade your solutions (all, or the problems named)"))
    add_grade_arguments(p)
    p.set_defaults(run=grade)

    p = sub.add_parser("watch", help=tr("re-grade a problem every time you save it, then "
                                        "move on"))
    p.add_argument("problem", nargs="?", metavar="PROBLEM",
                   help=tr("slug, number, NN-slug or folder (default: the first not passed)"))
    p.add_argument("--stay", action="store_true",
                   help=tr("keep watching this problem after it passes (default: move on)"))
    p.set_defaults(run=lazily("grader.learner.watch", "watch"))

    p = sub.add_parser("hint", help=tr("a hint for a problem, a stronger one each time you "
                                       "ask"))
    p.add_argument("problem", nargs="?", metavar="PROBLEM",
                   help=tr("slug, number, folder or path (default: the first problem not "
                           "passed)"))
    p.set_defaults(run=hint)

    p = sub.add_parser("reset", help=tr("put a problem's starter back, keeping your file as "
                                        "a timestamped .bak next to it"))
    p.add_argument("problem", metavar="PROBLEM", help=tr("slug, number, folder or path"))
    p.add_argument("--yes", action="store_true",
                   help=tr("do not ask for confirmation (needed without a terminal)"))
    p.set_defaults(run=reset)

    for module in ELSEWHERE if everything else ():
        try:
            adding = importlib.import_module(module).add_parser
        except ModuleNotFoundError as missing:
            if not (missing.name or "").startswith("grader."):
                raise
            continue  # a learners' copy holds none of the instructor's commands
        adding(sub)

    # A copy holds no GPT of the grader's: the shipped GPT runs as its exported program,
    # and the modern weights through the learner's Llama only (tools/practice_talk.py).
    copy = paths.in_a_copy()
    p = sub.add_parser("talk", help=tr("let a model continue your prompt, through your code"))
    p.add_argument("prompt", nargs="?", default="Once upon a time,",
                   help=tr("the text to continue (default: %(default)r)"))
    p.add_argument("--model", default="shipped", metavar="RUN",
                   help=tr("'shipped', 'modern' (the shipped Llama-style weights, with "
                           "--yours), or a run folder written by `gpt-kata train --yours` "
                           "(default: %(default)s)") if copy
                   else tr("'shipped', 'modern' (the shipped Llama-style model), or a run "
                           "folder written by `gpt-kata train` (default: %(default)s)"))
    p.add_argument("--yours", action="store_true",
                   help=tr("the shipped weights through your own GPT (problem 23) as well as "
                           "your sample_text, or with --model modern through your modern GPT "
                           "(problem 35), or with --model RUN the run's weights through "
                           "your GPT or modern GPT, whichever the run holds; refused until "
                           "they pass. Without it the shipped GPT runs as the copy stores "
                           "it, through your sample_text") if copy
                   else tr("the shipped weights through your own GPT (problem 23) as well as "
                           "your generate, or with --model modern through your modern GPT "
                           "(problem 35), or with --model RUN the run's weights through "
                           "your GPT or modern GPT, whichever the run holds; refused until "
                           "both pass. Without it the grader's GPT runs"))
    p.add_argument("--chars", type=int, default=200,
                   help=tr("how many characters to generate (default: %(default)s)"))
    p.add_argument("--stream", choices=["word", "sentence"],
                   help=tr("show the same text a word at a time (problem 14's WordStreamer) "
                           "or a sentence at a time (default: the whole text at once)"))
    sampling = p.add_argument_group(
        tr("sampling (problem 16's sample_text(), which talk uses, streamed or not)"))
    sampling.add_argument("--temperature", type=float, help=tr("0 is greedy (default: 1.0)"))
    sampling.add_argument("--top-k", type=int,
                          help=tr("keep the k most likely tokens, 0 for all (default: 0)"))
    sampling.add_argument("--top-p", type=float,
                          help=tr("nucleus: keep probability top_p, 1.0 for all (default: "
                                  "1.0)"))
    sampling.add_argument("--no-repeat-ngram", type=int, metavar="N",
                          help=tr("never repeat an N-gram, 0 for off (default: 0)"))
    sampling.add_argument("--seed", type=int,
                          help=tr("seed the generator once (default: 0 with the options "
                                  "above; without any, a fresh seed, shown before the text)"))
    p.set_defaults(run=lazily("grader.learner.tools.talk", "talk"))

    # A copy trains the learner's own models only, and unsandboxed.
    p = sub.add_parser("train", help=tr("train your GPT, or your modern model, with --yours, "
                                        "on the shipped corpus or your own text") if copy
                       else tr("train the GPT, or the modern model, on the shipped "
                               "corpus or your own text"))
    p.add_argument("--corpus", metavar="FILE",
                   help=tr("a UTF-8 text file (default: data/corpus.txt)"))
    p.add_argument("--out", metavar="DIR",
                   help=tr("where to write the run (default: runs/<time>)"))
    p.add_argument("--model", choices=["gpt", "modern"], default="gpt",
                   help=tr("the GPT, or the modern Llama-style model of problem 35 (with "
                           "--yours, yours), by default with the steps and threads the "
                           "shipped modern model was trained with (default: %(default)s)"))
    p.add_argument("--steps", type=int,
                   help=tr("optimizer steps, with --yours too; how long they take depends "
                           "on the machine and its load, so the run shows the time left as "
                           "it goes, from the pace of its steps so far (default: {steps}; "
                           "{modern_steps} with --model modern)",
                           steps=TRAIN_STEPS, modern_steps=MODERN_STEPS))
    p.add_argument("--yours", action="store_true",
                   help=tr("train your GPT (problem 23) with your train_loop (30), refused "
                           "until it passes. With --model modern: your modern GPT (35) "
                           "instead, refused until it passes") if copy
                   else tr("train your GPT (problem 23) with your train_loop (30) once it "
                           "passes, until then your get_batch (19) and train_step (25), "
                           "run in the sandbox; refused until they pass. With --model "
                           "modern: your modern GPT (35) instead, refused until it passes"))
    p.add_argument("--seed", type=int, default=0,
                   help=tr("seed for the weights and the batches (default: %(default)s)"))
    p.add_argument("--threads", type=positive_count, metavar="N",
                   help=tr("torch threads, with --yours too; more are faster on more cores, "
                           "and the losses then differ in their last bits, since sums run "
                           "in another order (default: {threads}; {modern_threads} with "
                           "--model modern)", threads=TRAIN_THREADS,
                           modern_threads=MODERN_THREADS))
    p.set_defaults(run=lazily("grader.learner.training.command", "train"))
    for command_parser in sub.choices.values():
        # `gpt-kata grade 6 --lang zh` as well as `gpt-kata --lang zh grade 6`: given
        # after the command, it is the same option (main reads it before parsing).
        language_option(command_parser, default=argparse.SUPPRESS)
    return parser


class VersionAction(argparse.Action):
    """`--version`: what a bug report or a class's CI log needs to say which grader
    ran. Read when asked: the packages' metadata, not torch itself (2 s to import)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_line())
        parser.exit()


def version_line() -> str:
    """'gpt-kata 0.1.0, Python 3.11.7, torch 2.13.0', with the grader's commit where it
    runs from a checkout: the versions its reports' provenance gives."""
    import platform

    from grader.reports.provenance import grader_commit, version_of

    commit = grader_commit()  # of the kata's checkout, or of a course's copy
    # A learners' copy installs as gpt-kata-practice (grader/release/templates).
    installed = (paths.in_a_copy() and version_of("gpt-kata-practice")) or version_of("gpt-kata")
    kata = "gpt-kata " + (installed or tr("(not installed)"))
    kata += f" ({commit})" if commit else ""
    torch = version_of("torch") or tr("not installed")
    return f"{kata}, Python {platform.python_version()}, torch {torch}"


def language_option(parser: argparse.ArgumentParser, **default: Any) -> None:
    parser.add_argument("--lang", choices=sorted(LANGUAGES), metavar="LANG", **default,
                        help=tr("the language to speak: en (English) or zh (中文) (default: "
                                "GPT_KATA_LANG, else your locale, else en)"))


def main(argv: list[str] | None = None) -> int:
    # Before anything prints: help and plain lines too (a Windows console piped to a
    # file writes cp1252, which has no Chinese).
    tolerant_streams()
    chosen, command = before_the_command(sys.argv[1:] if argv is None else argv)
    if chosen:
        use(chosen)  # before the parser is built: its help speaks the language too
    args = build_parser(command).parse_args(argv)
    try:
        if args.command not in READS_ONLY:
            refuse_another_grader()
        copy = args.command in NEEDS_REFERENCES and paths.in_a_copy()
        if copy and args.command in ("talk", "trace"):
            # talk: through the learner's own code; trace: beside the reference's
            # stored runs.
            code = in_the_copy(args.command, args)
        elif copy and args.command == "train" and not args.yours:
            # The grader's GPT and loop, which the copy lacks.
            raise UsageError(tr(
                "`gpt-kata train` trains the grader's GPT, whose code this learners' "
                "copy does not hold: `gpt-kata train --yours` trains your own GPT "
                "with your train_loop"))
        else:
            code = args.run(args)
    except UsageError as exc:
        # A path in it is the command line's, as typed: shown, never obeyed.
        print(f"gpt-kata {args.command}: {visible(exc, lines=True)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception:
        # An import that SIGTERM cut short fails when it is imported again ("cannot load
        # module more than once"): a command ended from outside says so by its code.
        if terminated():
            return 130
        raise
    return 130 if terminated() else code


def in_the_copy(command: str, args: argparse.Namespace) -> int:
    """A learners' copy's talk or trace, which run the copy's stored models: a model file
    it cannot read is said in one line, as the copy's grade says it, not as a traceback."""
    from gpt_kata_practice.program import ModelFileError

    try:
        return lazily(f"grader.learner.tools.practice_{command}", command)(args)
    except ModelFileError as damaged:
        raise UsageError(str(damaged)) from None


# The commands in a module of their own that adds their parser: trace, and the
# instructor's (which a learners' copy does not hold).
ELSEWHERE = ("grader.learner.tools.trace", "grader.classroom.gradebook.command",
             "grader.classroom.gradescope_bundle", "grader.classroom.similarity",
             "grader.release.command")
# The commands whose parsers build_parser adds itself.
BUILT_HERE = ("list", "grade", "watch", "hint", "reset", "talk", "train")
# The commands that only read and write files: the others start the grader's processes.
READS_ONLY = ("list", "hint", "reset")
# The learner's commands that run the kata's reference code, which a learners' copy
# does not hold (grader/learner/practice.py).
NEEDS_REFERENCES = ("talk", "trace", "train")


def refuse_another_grader() -> None:
    """Stop before starting a process that would refuse to run (see
    launch.installed_elsewhere): `python -m grader` in a checkout whose environment
    installs another checkout's grader, or none."""
    if paths.in_a_copy():
        return  # the copy's processes are its own (gpt_kata_practice/runs.py)
    from grader.sandbox.host.launch import installed_elsewhere, package_path

    other = installed_elsewhere()
    if other is None:
        return
    folder = visible(str(Path(package_path()).parent))
    if other:
        raise UsageError(tr(
            "this Python's installed grader is the one in {other}, not this folder's, and "
            "the grader starts its processes with the installed one: install this folder's "
            "(`pip install -e .` in {folder}), or grade with the installed one: `gpt-kata` "
            "instead of `python -m grader`",
            other=visible(other), folder=folder))
    raise UsageError(tr(
        "this Python has no grader installed, and the grader starts its processes with "
        "the installed one: install it (`pip install -e .` in {folder})", folder=folder))


def before_the_command(argv: list[str]) -> tuple[str | None, str | None]:
    """What a command line says before its command is parsed: the language `--lang`
    names, before the command or after it, the last one given as argparse takes it
    (None if none; one the kata does not speak is left for the parser to refuse with
    its choices), and the command (None if there is none, or if another option comes
    first: `-h grade` asks for the whole parser's help). Nothing after `--` is read:
    it is the command's text."""
    language, command, other_option = None, None, False
    arguments = iter(argv)
    for arg in arguments:
        if arg == "--":
            break
        if arg == "--lang":
            value = next(arguments, None)
            language = code_of(value) if value is not None else language
        elif arg.startswith("--lang="):
            language = code_of(arg.split("=", 1)[1])
        elif arg.startswith("-"):
            other_option = True
        elif command is None and not other_option:
            command = arg
        else:
            other_option = True  # past the command: no later word is one
    return language, command


def run() -> None:
    """The entry point that a `gpt-kata` script installed before grader/cli/entry.py
    still names: the same, with the signals handled once this module is imported."""
    from grader.learner.output import exit_now, handle_stop_signals

    handle_stop_signals()
    exit_now(main())


if __name__ == "__main__":
    run()
