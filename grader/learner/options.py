"""What several commands share: the parser, option types, problem names, report
targets, the limits, the classroom rule."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from grader.learner.errors import UsageError
from grader.locale import tr, translated
from grader.locale.parsers import OLD_ARGUMENT_ERROR, argument_error, in_the_language
from grader.registry import Problem, find, name_key, problems
from grader.reports.late import LatePenalty, parse_penalty, parse_percent
from grader.sandbox.wire.limits import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_MEMORY_MB,
    DEFAULT_PROBLEM_BUDGET,
    DEFAULT_SCRATCH_MB,
    MB,
    Limits,
)
from grader.wording import columns, is_wide, one_of, wrapped

T = TypeVar("T")


def hidden_in_a_copy(parser: argparse.ArgumentParser, refused: Iterable[str]) -> None:
    """In a learners' copy, leave out of the command's help the options (by dest) it
    refuses or has nothing to set with: the help shows what the copy's command does."""
    from grader import paths

    if paths.in_a_copy():
        for action in parser._actions:
            if action.dest in refused:
                action.help = argparse.SUPPRESS


def select_problems(names: list[str]) -> list[Problem]:
    chosen = [find_problem(n) for n in names] if names else list(problems())
    return sorted(set(chosen), key=lambda p: p.number)


def find_problem(name: str) -> Problem:
    """A problem by any of its names; else a usage error that suggests the problems
    whose names hold the one given ("crop": crop-context), or the nearest spellings."""
    try:
        return find(name)
    except LookupError as exc:
        holding = problems_holding(name)
        if not holding:
            raise UsageError(str(exc)) from None
        raise UsageError(tr("no problem called {name!r}; did you mean {slugs}?", name=name,
                            slugs=one_of([p.slug for p in holding]))) from None


def problems_holding(name: str, most: int = 4) -> list[Problem]:
    """The problems with a word of their slug or folder starting with `name` (3
    characters or more; "top" is not eos-stop), read as find reads a name: the last
    part of a path, any case, _ for -."""
    key = name_key(name)
    if len(key) < 3:
        return []
    holding = [p for p in problems() if f"-{key}" in f"-{p.slug}" or p.folder.startswith(key)]
    return holding if len(holding) <= most else []


def _read(text: str, convert: Callable[[str], T],
          refusal: Callable[[], str] | None = None) -> T:
    """`text` converted; else argparse's error, saying `refusal()` (by default, what
    `convert` said)."""
    try:
        return convert(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(refusal() if refusal else str(exc)) from None


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero."""
    value = _read(text, float, lambda: tr("{text!r} is not a number of seconds", text=text))
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(tr("{text!r}: give a finite number of seconds "
                                            "above 0", text=text))
    return value


def positive_count(text: str) -> int:
    """An argparse type: a whole number, at least 1 (jobs, threads)."""
    value = _read(text, int, lambda: tr("{text!r} is not a whole number", text=text))
    if value < 1:
        raise argparse.ArgumentTypeError(tr("{text!r}: at least 1", text=text))
    return value


# A terabyte: more than any machine that grades has, and far below the limits the
# kernel takes (a worker's address space is set to twice its memory).
MAX_MEGABYTES = 1 << 20


def positive_megabytes(text: str) -> float:
    """An argparse type: a number of megabytes, at least 1 and at most MAX_MEGABYTES."""
    value = _read(text, float, lambda: tr("{text!r} is not a number of megabytes", text=text))
    if not math.isfinite(value) or not 1 <= value <= MAX_MEGABYTES:
        raise argparse.ArgumentTypeError(tr("{text!r}: give a number of megabytes from 1 to "
                                            "{most} (a terabyte)", text=text,
                                            most=MAX_MEGABYTES))
    return value


def penalty_spec(text: str) -> LatePenalty:
    """An argparse type: a late penalty's rate, e.g. 10%/day (reports/late.py)."""
    return _read(text, parse_penalty)


def percent_spec(text: str) -> int:
    """An argparse type: a whole percent, e.g. 50%."""
    return _read(text, parse_percent)


def add_late_penalty_options(p: argparse.ArgumentParser, penalty_help: str) -> None:
    """--late-penalty and its cap; `penalty_help`: the first's help, which says what is
    late as the command sees it (e.g. "take RATE of a late submission's points for each
    unit begun after its due date, ...")."""
    p.add_argument("--late-penalty", type=penalty_spec, metavar="RATE", help=penalty_help)
    p.add_argument("--late-penalty-max", type=percent_spec, default=100, metavar="PERCENT",
                   help=tr("the most a late penalty takes (default: %(default)s%%)"))


def add_limit_options(p: argparse.ArgumentParser) -> None:
    """The options that set a grade's limits; `limits_from` makes them one `Limits`."""
    p.add_argument("--timeout", type=positive_seconds, default=DEFAULT_CALL_TIMEOUT,
                   metavar="SECONDS",
                   help=tr("wall-clock limit for each call of your code (default: "
                           "%(default)g)"))
    p.add_argument("--budget", type=positive_seconds, default=DEFAULT_PROBLEM_BUDGET,
                   metavar="SECONDS",
                   help=tr("wall-clock limit for all calls of one problem together "
                           "(default: %(default)g)"))
    p.add_argument("--memory", type=positive_megabytes, default=DEFAULT_MEMORY_MB, metavar="MB",
                   help=tr("memory your code may use beyond the worker's own, on Linux "
                           "(default: %(default)g)"))
    p.add_argument("--scratch-mb", type=positive_megabytes, default=DEFAULT_SCRATCH_MB,
                   metavar="MB", help=tr("size of the scratch folder your code may write in, "
                                         "where the sandbox gives it a tmpfs of its own "
                                         "(default: %(default)g)"))


def limits_from(args: argparse.Namespace) -> Limits:
    """The one `Limits` a command's limit options make, passed down whole from here."""
    return Limits(call_timeout=args.timeout, problem_budget=args.budget,
                  memory_bytes=int(args.memory * MB), scratch_bytes=int(args.scratch_mb * MB))


def require_isolation(args: argparse.Namespace) -> None:
    """Classroom mode grades code nobody vouches for: only inside a sandbox."""
    if not args.classroom or args.allow_unisolated:
        return
    if getattr(args, "no_sandbox", False):
        raise UsageError("--classroom grades inside the sandbox; drop --no-sandbox, or add "
                         "--allow-unisolated to grade without it")
    from grader.sandbox.worker.machine import probe

    if not probe().landlock_abi:
        raise UsageError(
            "classroom mode needs Linux with Landlock (5.13 or newer) so that submissions "
            "cannot read the references or touch the grader, and this system has none; "
            "grade on such a machine, or pass --allow-unisolated to grade anyway")


def check_report_target(option: str, target: str | None, graded: Iterable[Path] = ()) -> None:
    """Refuse a report path that could not be written, or would overwrite a learner's
    code (a file `graded`, any existing .py or notebook), before minutes of grading."""
    if target is None:
        return
    path = Path(target)
    if path.is_file() and (path.suffix in (".py", ".ipynb") or any(
            p.is_file() and os.path.samefile(path, p) for p in graded)):
        raise UsageError(tr("{option} {target} is code, not a report: name another file "
                            "(a .json or .xml) to write the report to", option=option,
                            target=target))
    if target.endswith(("/", os.sep)) or path.is_dir():
        raise UsageError(tr("{option} {target} is a folder; name a file to write",
                            option=option, target=target))
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(tr("{option} {target}: there is no folder {parent}", option=option,
                            target=target, parent=parent))
    if not os.access(path if path.exists() else parent, os.W_OK):
        raise UsageError(tr("{option} {target}: not allowed to write there", option=option,
                            target=target))


class DefaultsShown(argparse.HelpFormatter):
    """Every option that takes a value says what it is when not given (one that must be
    given says nothing of it); a help holding Chinese is wrapped to the terminal's
    columns, not its count of characters."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        if not any(map(is_wide, text)):
            return super()._split_lines(text, width)
        return wrapped(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if not any(map(is_wide, text)):
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in wrapped(text, width - len(indent)))

    def _format_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None
                      ) -> str:
        # argparse lays the usage out by its prefix's count of characters, and "用法："
        # takes six columns, not three: the usage is laid out after as many spaces, then
        # they give way to the prefix, so that the lines below stand under the first's
        # options and the first fits the terminal.
        if prefix is None:
            prefix = argparse._("usage: ")  # type: ignore[attr-defined]
        if columns(prefix) == len(prefix):
            return super()._format_usage(usage, actions, groups, prefix)
        spaces = " " * columns(prefix)
        return super()._format_usage(usage, actions, groups, spaces).replace(spaces, prefix, 1)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        # A help in another language says its default in its own words (默认).
        if (not action.option_strings or action.nargs == 0 or action.required
                or "default" in text or tr("default") in text):
            return text
        shown = tr("none") if action.default is None else "%(default)s"
        return tr("{text} (default: {shown})", text=text, shown=shown).lstrip()


class KataParser(argparse.ArgumentParser):
    """A command's parser. With `intermixed`, its options may also come between or
    before its positionals: argparse alone takes all of a command's positionals in
    one go, so `trace generate --steps 5 "Tom"` would leave "Tom" unrecognised."""

    def __init__(self, *args: Any, intermixed: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsShown)
        # argparse's own words in the language in use, here its titles and -h's help,
        # and in every method below that says anything (grader/locale/parsers.py)
        with in_the_language():
            super().__init__(*args, **kwargs)
        self.intermixed = intermixed
        self._parsing = False

    def parse_args(self, *args: Any, **kwargs: Any) -> Any:
        with in_the_language():
            return super().parse_args(*args, **kwargs)

    def parse_intermixed_args(self, *args: Any, **kwargs: Any) -> Any:
        with in_the_language():
            return super().parse_intermixed_args(*args, **kwargs)

    def format_usage(self) -> str:
        with in_the_language():
            return super().format_usage()

    def format_help(self) -> str:
        with in_the_language():
            text = super().format_help()
        if sys.version_info < (3, 13):
            # argparse before 3.13 ends a section's title with an English colon of its
            # own; 3.13 asks for "%(heading)s:" (a Chinese one) as it does here.
            for group in self._action_groups:
                if group.title:
                    said = translated("%(heading)s:") % {"heading": group.title}
                    text = text.replace(f"\n{group.title}:\n", f"\n{said}\n")
        return text

    def error(self, message: str) -> NoReturn:
        with in_the_language():
            super().error(message)

    def add_subparsers(self, **kwargs: Any) -> Any:
        with in_the_language():
            return super().add_subparsers(**kwargs)

    if OLD_ARGUMENT_ERROR:
        def _parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
            # Python 3.10 says an argument's error in English words of its own.
            try:
                return super()._parse_known_args(*args, **kwargs)
            except argparse.ArgumentError as error:
                self.error(argument_error(error))

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        with in_the_language():
            return self._parse_known(args, namespace)

    def _parse_known(self, args: Any, namespace: Any) -> Any:
        # Help is printed in argparse's own pass: the intermixed one hides positionals'
        # defaults while it parses options, and a help saying "%(default)r" then fails.
        asks_for_help = args is not None and any(
            a == "-h" or (len(a) > 3 and "--help".startswith(a))  # argparse takes "--he"
            for a in (args[:args.index("--")] if "--" in args else args))
        if not self.intermixed or self._parsing or asks_for_help:
            return super().parse_known_args(args, namespace)
        # parse_known_intermixed_args parses in two passes through parse_known_args,
        # which must then be argparse's own.
        self._parsing = True
        # It also keeps the usage for its messages by cutting the formatted usage's
        # first seven characters, English's "usage: ": another language's prefix
        # ("用法：") would take the program's name with it. Kept here, cut by its own.
        usage = self.usage
        if usage is None:
            self.usage = self.format_usage().removeprefix(tr("usage: ")).rstrip("\n")
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._parsing = False
            self.usage = usage
