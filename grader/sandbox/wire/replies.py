"""The replies the grader accepts from a worker, each checked field by field before
anything is built from it: a reply that breaks a rule raises ProtocolError, which
`unreadable()` turns into the learner's message. The values inside are decoded by
grader.sandbox.wire.encoding.
"""

from __future__ import annotations

from typing import Any

from grader.locale import tr
from grader.sandbox.wire.encoding import (
    MAX_DIMS,
    MAX_ELEMENTS,
    ProtocolError,
    checked_int,
    checked_text,
    decode,
)
from grader.sandbox.wire.printed import Printed

MAX_MESSAGE = 16_000  # characters of an error message or captured output
MAX_FRAMES = 20  # traceback lines in an error report
MAX_MODEL_CALLS = 10_000  # forward passes recorded during one call
MAX_CUT_LINES = 10**12  # lines of a call's output left out: more than any memory holds


def unreadable(reason: object) -> str:
    """The learner's message for a reply that failed a check."""
    return tr("the submission's process sent an unreadable reply ({reason})", reason=reason)


def read_error(error: Any) -> dict[str, Any]:
    """A worker's error report, with only the fields the grader reads, each checked."""
    if not isinstance(error, dict):
        raise ProtocolError("an error report that is not an object")
    line = error.get("line")
    if line is not None:
        checked_int(line, "line number", 0, 10**9)
    frames = error.get("frames") or []
    if not isinstance(frames, list) or len(frames) > MAX_FRAMES:
        raise ProtocolError(f"traceback lines that are not a list of at most {MAX_FRAMES}")
    return {
        "type": checked_text(error.get("type"), "an error type", 200, "Error"),
        "message": checked_text(error.get("message"), "an error message", MAX_MESSAGE),
        "file": checked_text(error.get("file"), "a file name", 4096) or None,
        "line": line,
        "function": checked_text(error.get("function"), "a function name", 1000) or None,
        "frames": [checked_text(f, "a traceback line", 2000) for f in frames],
        "limit": checked_text(error.get("limit"), "a limit", 200) or None,
    }


def read_load_reply(reply: dict) -> dict[str, Any] | None:
    """The error that stopped a submission from loading, or None if it loaded."""
    if "error" in reply:
        return read_error(reply["error"])
    if reply.get("ok") is not True:
        raise ProtocolError("a reply to `load` with neither ok nor error")
    return None


def read_output(reply: dict) -> Printed:
    """What the call printed: the lines the worker kept, and how many it left out after
    them, which only a worker that kept some lines can have left out."""
    text = checked_text(reply.get("output"), "captured output", MAX_MESSAGE)
    cut = checked_int(reply.get("output_cut", 0), "the count of lines left out of the output",
                      0, MAX_CUT_LINES)
    if cut and not text:
        raise ProtocolError("lines left out of an output that kept none")
    return Printed.of(text, cut)


def read_call_reply(reply: dict) -> dict[str, Any]:
    """A reply to `call`, checked and decoded: the fields of a CallOutcome."""
    output = read_output(reply)
    if "error" in reply:
        return {"error": read_error(reply["error"]), "output": output}
    if reply.get("ok") is not True or "result" not in reply:
        raise ProtocolError("a reply to `call` with neither a result nor an error")
    after = reply.get("after", {})
    if not isinstance(after, dict) or len(after) > MAX_DIMS * 4:
        raise ProtocolError("the arguments after the call are not a small object")
    watched = {}
    for key, value in after.items():
        if not (key.isascii() and key.isdigit() and len(key) <= 4):
            raise ProtocolError(f"argument position {key[:10]!r} is not a number")
        watched[int(key)] = decode(value)
    calls = reply.get("model_calls")
    if calls is not None:
        if not isinstance(calls, list) or len(calls) > MAX_MODEL_CALLS:
            raise ProtocolError(f"model calls that are not a list of at most {MAX_MODEL_CALLS}")
        for entry in calls:
            if not isinstance(entry, list) or len(entry) != 2:
                raise ProtocolError("a model call that is not a pair of numbers")
            for number in entry:
                checked_int(number, "a model call's token count", 0, MAX_ELEMENTS)
    changed = reply.get("model_changed", False)
    if not isinstance(changed, bool):
        raise ProtocolError("model_changed that is not true or false")
    return {"result": decode(reply["result"]), "after": watched, "model_changed": changed,
            "model_calls": calls, "output": output}


def read_item_reply(reply: dict) -> tuple[str, Any]:
    """A reply to `next`: ("item", value), ("done", None) or ("error", report)."""
    if "error" in reply:
        return "error", read_error(reply["error"])
    if reply.get("done") is True:
        return "done", None
    if reply.get("ok") is not True or "item" not in reply:
        raise ProtocolError("a reply to `next` with no item")
    return "item", decode(reply["item"])
