"""An error the worker reports from the learner's code, as the learner reads it:
one plain line with its file and line, and the kind of failure it is."""

from __future__ import annotations

from pathlib import PurePath

from grader.grading.values.failures import BUSY, NOT_IMPLEMENTED, UNAVAILABLE
from grader.grading.values.sanitise import learner_error
from grader.locale import tr
from grader.reuse import PROBLEM_FOLDER


def where(error: dict) -> str:
    """The file and line an error names: "solution.py:12: ", or where the worker
    found it in another problem's file, "23-gpt/solution.py:40: "."""
    file, line = error.get("file"), error.get("line")
    if file:
        parts = PurePath(file).parts
        elsewhere = len(parts) == 2 and PROBLEM_FOLDER.fullmatch(parts[0])
        file = "/".join(parts) if elsewhere else PurePath(file).name
    if file and line:
        return f"{file}:{line}: "
    if file:
        return f"{file}: "
    return ""


def one_line(error: dict) -> str:
    """A learner's error in one plain line, with file and line."""
    error = learner_error(error)
    kind, message = error.get("type", "Error"), error.get("message", "")
    if not_written(error):
        return where(error) + tr("not implemented yet (the starter still raises "
                                 "NotImplementedError)")
    if kind == "SyntaxError":
        return f"{where(error)}SyntaxError: {message}"
    if kind in ("MissingClass", "MissingMethod", "LoadFailed", "WorkerDied", "BadResult"):
        return f"{where(error)}{message}"
    return f"{where(error)}{kind}: {message}".rstrip(": ")


def unavailable_kind(error: dict) -> str:
    """Whether an error that stops a whole problem is the starter's, a real failure, or
    a load that ran out of time on a busy machine (grader/sandbox/host/slow_or_endless.py)."""
    if error.get("busy") is True:
        return BUSY
    return NOT_IMPLEMENTED if not_written(learner_error(error)) else UNAVAILABLE


def not_written(error: dict) -> bool:
    """Whether the error is the starter's NotImplementedError, raised in the learner's
    own files: torch raises one too, for an nn.Module with no method spelled forward,
    and that one is an error to show, not a problem left unstarted."""
    return error.get("type") == "NotImplementedError" and bool(error.get("frames")
                                                               or error.get("file"))
