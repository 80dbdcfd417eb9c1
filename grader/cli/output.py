"""How the commands print: rich on a terminal, whole lines everywhere else."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from rich.console import Console


def console(stderr: bool = False, quiet: bool = False) -> Console:
    """A rich console that wraps lines only on a terminal.

    Piped into a file, a CI log or another program, a line cut at 80 columns
    breaks searches and copied messages; the reader's own window wraps them.
    """
    from rich.console import Console

    made = Console(highlight=False, stderr=stderr, quiet=quiet)
    if not made.is_terminal:
        made.soft_wrap = True
    return made


def clock(seconds: float) -> str:
    """Seconds as m:ss (or h:mm:ss), for progress lines."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def exit_now(code: int) -> NoReturn:
    """Flush the standard streams and exit without interpreter teardown.

    Unloading torch, hypothesis and pytest at exit takes about half a second;
    every file the commands write is closed before they return.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
