"""A learner's error as plain data for the grader: its type and message, where in
the submission file it was raised, and the sandbox limit it stands for; and what a
reached limit, or a call the sandbox refused, looks like afterwards: the sentence a
learner is shown for an exception or a fatal signal."""

from __future__ import annotations

import errno
import signal
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.locale import tr
from grader.reuse import learner_file
from grader.sandbox.wire.limits import MB
from grader.sandbox.worker.layers.seccomp import refused_call

if TYPE_CHECKING:
    from grader.sandbox.worker.layers.policy import Policy

# Characters of an error's message that the worker sends.
MESSAGE_LIMIT = 4000


def out_of_memory(exc: BaseException) -> bool:
    """Whether an exception is how a reached memory limit shows itself."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "Cannot allocate memory" in text)


def limit_message(policy: Policy, exc: BaseException | None = None,
                  signum: int | None = None) -> str | None:
    """A sentence naming the limit (or the sandbox's rule) an exception or a fatal
    signal stands for."""
    if exc is not None:
        if policy.forbid_sockets and (refused := refused_call(exc)):
            return refused
        if out_of_memory(exc) and policy.memory_bytes is not None:
            return tr("the memory limit ({size} MB) was reached",
                      size=policy.memory_bytes // MB)
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            size = policy.max_file_bytes or 0
            return tr("the file size limit ({size} MB) was reached", size=size // MB)
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC and policy.scratch_bytes:
            return tr("the scratch folder's size limit ({size} MB) was reached",
                      size=policy.scratch_bytes // MB)
        if isinstance(exc, BlockingIOError) and policy.max_processes is not None:
            return tr("the process limit ({count}) was reached", count=policy.max_processes)
        if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
            # A thread needs both a task slot and memory for its stack.
            return tr("a thread could not start: the process or memory limit was reached")
        if isinstance(exc, PermissionError) and exc.errno == errno.EACCES:
            # Landlock's refusal: "Permission denied" alone reads like the file's mode,
            # and the same code passes where there is no sandbox (macOS, Windows).
            return tr("the sandbox refused it: a submission runs no other program, writes "
                      "only in its working folder, and reads only its own files and what "
                      "Python and torch need")
    if signum is not None:
        if signum == getattr(signal, "SIGXCPU", None) and policy.cpu_seconds is not None:
            return tr("the CPU time limit ({seconds} s) was reached",
                      seconds=policy.cpu_seconds)
        if signum == getattr(signal, "SIGXFSZ", None):
            size = policy.max_file_bytes or 0
            return tr("the file size limit ({size} MB) was reached", size=size // MB)
    return None


def _own_frames(exc: BaseException, path: str) -> list[tuple[str, traceback.FrameSummary]]:
    """The frames of the traceback that are in the learner's files, outermost first,
    each with its file as shown."""
    frames = ((learner_file(frame.filename, path), frame)
              for frame in traceback.extract_tb(exc.__traceback__))
    return [(shown, frame) for shown, frame in frames if shown]


def _text_of(exc: BaseException) -> str:
    # A learner's exception class may define __str__ to raise: that must not end the worker.
    try:
        return str(exc)
    except Exception:  # noqa: BLE001
        return tr("<{type} whose message cannot be printed>", type=type(exc).__name__)


def describe_error(exc: BaseException, path: str, policy: Any = None) -> dict[str, Any]:
    """The learner's error as plain data; `limit` names a sandbox limit it stands for."""
    own = _own_frames(exc, path)
    # Where in the learner's files it was raised.
    file, line, function = ((own[-1][0], own[-1][1].lineno, own[-1][1].name) if own
                            else (None, None, None))
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        file = learner_file(exc.filename or path, path) or Path(path).name
        line, function = exc.lineno, None
    frames = [f"{shown}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for shown, f in own]
    message = _text_of(exc) if not isinstance(exc, SyntaxError) else (exc.msg or "invalid syntax")
    if isinstance(exc, SystemExit):  # its message is only its code, often none
        said = tr("sys.exit() was called: a method returns its answer instead of ending "
                  "the process")
        message = f"{message} ({said})" if message else said
    limit = None
    if policy is not None:
        try:
            limit = limit_message(policy, exc)
        except Exception:  # noqa: BLE001 - it reads str(exc), which the learner defines
            limit = None
    if limit:
        # "MemoryError" alone reads like a bug in the learner's code; the limit
        # is what they need to know, and torch's own text stays for the detail.
        message = f"{limit}" + (f" ({message})" if message else "")
    return {
        "type": type(exc).__name__,
        "message": message[:MESSAGE_LIMIT],
        "file": file,
        "line": line,
        "function": function,
        "frames": frames[-5:],
        "limit": limit,
    }
