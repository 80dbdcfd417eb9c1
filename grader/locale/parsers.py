"""argparse's own words ("usage:", "options", its errors) in the kata's language.

argparse asks gettext for each of its texts at the moment it says it, through the
`_` and `ngettext` its module imported from gettext. A parser of the kata says them
`in_the_language` in use: for that while, in that thread, those two names answer
from the kata's catalogs, through a gettext translations object; everywhere else,
and in every other parser, they are gettext's own functions, called as before. Where
the language is English argparse is left as it is.

ARGPARSE_TEXTS holds every text argparse asks for, from Python 3.10 to 3.14 (their
wording differs), so that the catalogs hold them whatever Python made them;
tests/test_cli_chinese.py holds the list to the running Python's argparse.
"""

from __future__ import annotations

import argparse
import gettext
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from grader.locale import ENGLISH, language, marked, translated

# The translations argparse speaks with in this thread for the while (None: its own).
SPEAKING: ContextVar[gettext.NullTranslations | None] = ContextVar("SPEAKING", default=None)


class KataTranslations(gettext.NullTranslations):
    """gettext's translations of the language in use, from the kata's catalogs. Chinese
    has one form for every number: ngettext picks argparse's English singular or plural,
    and each has its translation."""

    def gettext(self, message: str) -> str:
        return translated(message)

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return translated(msgid1 if n == 1 else msgid2)


def _asking(own: Callable[..., str], name: str) -> Callable[..., str]:
    """argparse's `name` (gettext or ngettext): the kata's translations while a kata's
    parser speaks, else `own`, the function argparse had."""
    def ask(*args: str | int) -> str:
        translations = SPEAKING.get()
        if translations is None:
            return own(*args)
        return getattr(translations, name)(*args)

    ask.speaks_the_kata = True  # type: ignore[attr-defined]
    return ask


def _hear_the_kata() -> None:
    """Once, the first time a parser speaks another language than English: argparse's
    two names ask SPEAKING first. Nothing else changes for anyone else."""
    if not getattr(argparse._, "speaks_the_kata", False):  # type: ignore[attr-defined]
        argparse._ = _asking(argparse._, "gettext")  # type: ignore[attr-defined]
        argparse.ngettext = _asking(argparse.ngettext, "ngettext")  # type: ignore[attr-defined]


@contextmanager
def in_the_language() -> Iterator[None]:
    """argparse speaks the language in use in this thread for the while."""
    if language() == ENGLISH:
        yield
        return
    _hear_the_kata()
    token = SPEAKING.set(KataTranslations())
    try:
        yield
    finally:
        SPEAKING.reset(token)


def argument_error(error: argparse.ArgumentError) -> str:
    """An argument's error as argparse 3.11 and later say it, in the language in use:
    3.10 joins the argument's name and the message in English words of its own."""
    if error.argument_name is None:
        return error.message
    return translated("argument %(argument_name)s: %(message)s") % {
        "argument_name": error.argument_name, "message": error.message}


OLD_ARGUMENT_ERROR = sys.version_info < (3, 11)

# Every text argparse asks gettext for, in Python 3.10 to 3.14.
ARGPARSE_TEXTS = (
    # help
    marked("usage: "),
    marked("positional arguments"),
    marked("options"),
    marked("subcommands"),
    marked("%(heading)s:"),
    marked(" (default: %(default)s)"),
    marked("show this help message and exit"),
    marked("show program's version number and exit"),
    # a command line's errors
    marked("%(prog)s: error: %(message)s\n"),
    marked("%(prog)s: warning: %(message)s\n"),
    marked("argument %(argument_name)s: %(message)s"),
    marked("the following arguments are required: %s"),
    marked("one of the arguments %s is required"),
    marked("unrecognized arguments: %s"),
    marked("invalid choice: %(value)r (choose from %(choices)s)"),
    marked("invalid choice: %(value)r, maybe you meant %(closest)r? "
           "(choose from %(choices)s)"),
    marked("invalid %(type)s value: %(value)r"),
    marked("expected one argument"),
    marked("expected at most one argument"),
    marked("expected at least one argument"),
    marked("expected %s argument"),
    marked("expected %s arguments"),
    marked("ambiguous option: %(option)s could match %(matches)s"),
    marked("not allowed with argument %s"),
    marked("ignored explicit argument %r"),
    marked("unknown parser %(parser_name)r (choices: %(choices)s)"),
    marked("can't open '%(filename)s': %(error)s"),
    marked("argument '%(argument_name)s' is deprecated"),
    marked("option '%(option)s' is deprecated"),
    marked("command '%(parser_name)s' is deprecated"),
)
