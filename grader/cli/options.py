"""What several commands share: option types, problem names, the classroom rule."""

from __future__ import annotations

import argparse
import math

from grader.cli.errors import UsageError
from grader.registry import Problem, find, problems


def select_problems(names: list[str]) -> list[Problem]:
    try:
        chosen = [find(n) for n in names] if names else list(problems())
    except LookupError as exc:
        raise UsageError(str(exc)) from None
    return sorted(set(chosen), key=lambda p: p.number)


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of seconds above 0")
    return value


def positive_megabytes(text: str) -> float:
    """An argparse type: a finite number of megabytes, at least 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of megabytes") from None
    if not math.isfinite(value) or value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a finite number of megabytes, "
                                         "at least 1")
    return value


def require_isolation(args: argparse.Namespace) -> None:
    """Classroom mode grades code nobody vouches for: only inside a sandbox."""
    if not args.classroom or args.allow_unisolated:
        return
    if getattr(args, "no_sandbox", False):
        raise UsageError("--classroom grades inside the sandbox; drop --no-sandbox, or add "
                         "--allow-unisolated to grade without it")
    from grader.sandbox.isolation import probe

    if not probe().landlock_abi:
        raise UsageError(
            "classroom mode needs Linux with Landlock (5.13 or newer) so that submissions "
            "cannot read the references or touch the grader, and this system has none; "
            "grade on such a machine, or pass --allow-unisolated to grade anyway")
