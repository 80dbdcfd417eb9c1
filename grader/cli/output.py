"""How the commands print: rich on a terminal, whole lines everywhere else."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
