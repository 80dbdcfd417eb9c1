"""How the commands print: rich on a terminal, whole lines everywhere else."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from rich.console import Console


def console(stderr: bool = False, quiet: bool = False) -> Console:
    """A rich console that wraps lines only on a terminal, never crashes on an
    encoding, and goes quiet when its reader goes away.

    Piped into a file, a CI log or another program, a line cut at 80 columns
    breaks searches and copied messages; the reader's own window wraps them.
    """
    from rich.console import Console

    class KataConsole(Console):
        def on_broken_pipe(self) -> None:
            # `gpt-kata grade | head -2`: the reader has what it wanted. rich would
            # exit(1) here, skipping the rest of the command and replacing its exit
            # code (the grade's); instead the rest of the output goes nowhere.
            self.quiet = True
            silence(self.file)

    tolerant_streams()
    # emoji=False: a learner's printed ":smile:" is shown as printed, not as an emoji.
    made = KataConsole(highlight=False, emoji=False, stderr=stderr, quiet=quiet)
    if not made.is_terminal:
        made.soft_wrap = True
    return made


def tolerant_streams() -> None:
    """Let stdout and stderr write any text: a character their encoding lacks (an
    emoji on cp1252, a check mark on ASCII) is written as a visible escape instead of
    raising UnicodeEncodeError in the middle of a report."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass  # a closed or exotic stream: rendering catches what it raises


def silence(stream: object) -> None:
    """Point the stream's file descriptor at the null device (Python's advice for
    a closed pipe), so that later writes and the flush at exit cannot fail."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def clock(seconds: float) -> str:
    """Seconds as m:ss (or h:mm:ss), for progress lines."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def handle_stop_signals() -> None:
    """Ctrl-C as Python takes it, but never raised inside an import
    (grader/grading/engine/ctrl_c.py); SIGTERM (a CI job's time limit, `kill`) and
    SIGHUP (the terminal closed) as a Ctrl-C: the command stops as an interrupted one
    does (exit code 130), its workers and temporary folders going with it, where
    Python's default would end it on the spot and leave them behind. A signal ignored
    where the command started (SIGINT in a background job, SIGHUP under `nohup`)
    stays ignored."""
    import signal

    from grader.grading.engine.ctrl_c import interrupt, terminate

    for name, handler, python_s in (("SIGINT", interrupt, signal.default_int_handler),
                                    ("SIGTERM", terminate, signal.SIG_DFL),
                                    ("SIGHUP", terminate, signal.SIG_DFL)):
        try:
            number = getattr(signal, name)  # Windows has no SIGHUP
            if name != "SIGTERM" and signal.getsignal(number) is not python_s:
                continue
            signal.signal(number, handler)
        except (ValueError, OSError, AttributeError):  # not the main thread; no such signal
            pass


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
