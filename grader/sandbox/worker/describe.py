"""A learner's error as plain data for the grader: its type and message, where in
the submission file it was raised, and the sandbox limit it stands for."""

from __future__ import annotations

import os
import traceback
from pathlib import Path
from typing import Any

from grader.locale import tr
from grader.sandbox.worker.outcome import limit_message

# Characters of an error's message that the worker sends.
MESSAGE_LIMIT = 4000


def _own_frames(exc: BaseException, path: str) -> list[traceback.FrameSummary]:
    """The frames of the traceback that are in the submission file, outermost first."""
    target = os.path.normcase(os.path.abspath(path))
    return [frame for frame in traceback.extract_tb(exc.__traceback__)
            if os.path.normcase(os.path.abspath(frame.filename)) == target]


def _text_of(exc: BaseException) -> str:
    # A learner's exception class may define __str__ to raise: that must not end the worker.
    try:
        return str(exc)
    except Exception:  # noqa: BLE001
        return tr("<{type} whose message cannot be printed>", type=type(exc).__name__)


def describe_error(exc: BaseException, path: str, policy: Any = None) -> dict[str, Any]:
    """The learner's error as plain data; `limit` names a sandbox limit it stands for."""
    own = _own_frames(exc, path)
    deepest = own[-1] if own else None  # where in the submission it was raised
    file, line, function = ((deepest.filename, deepest.lineno, deepest.name) if deepest
                            else (None, None, None))
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        file, line, function = exc.filename or path, exc.lineno, None
    frames = [f"{Path(f.filename).name}:{f.lineno} in {f.name}: {(f.line or '').strip()}"
              for f in own]
    message = _text_of(exc) if not isinstance(exc, SyntaxError) else (exc.msg or "invalid syntax")
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
