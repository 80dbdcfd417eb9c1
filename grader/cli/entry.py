"""The console entry point (`gpt-kata`, `python -m grader`): the stop signals handled
before anything else is imported, so that a Ctrl-C or SIGTERM in the first tenth of a
second ends the command as a later one does (exit 130), not with a Python traceback
or killed on the spot."""

from __future__ import annotations


def run() -> None:
    """`main`, then an exit that skips interpreter teardown (longer than grading a
    passing problem's checks)."""
    from grader.learner.output import exit_now, handle_stop_signals

    handle_stop_signals()
    try:
        from grader.cli.main import main

        code = main()
    except KeyboardInterrupt:  # before main's own handling: while it was imported, say
        code = 130
    exit_now(code)
