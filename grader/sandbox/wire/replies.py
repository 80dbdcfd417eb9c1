"""The replies the grader accepts from a worker, each held to its struct before
anything is built from it: a reply that breaks a rule raises ProtocolError, which
`unreadable()` turns into the learner's message. The values inside are decoded by
grader.sandbox.wire.encoding.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from grader.locale import tr
from grader.sandbox.wire.encoding import MAX_DIMS, MAX_ELEMENTS, ProtocolError, decode
from grader.sandbox.wire.printed import Printed

MAX_MESSAGE = 16_000  # characters of an error message or captured output
MAX_FRAMES = 20  # traceback lines in an error report
MAX_MODEL_CALLS = 10_000  # forward passes recorded during one call
MAX_CUT_LINES = 10**12  # lines of a call's output left out: more than any memory holds


Name = Annotated[str, msgspec.Meta(max_length=200)]  # an error's type, a limit's name
Message = Annotated[str, msgspec.Meta(max_length=MAX_MESSAGE)]
Line = Annotated[str, msgspec.Meta(max_length=4096)]  # a file's path, a traceback's line
Tokens = Annotated[int, msgspec.Meta(ge=0, le=MAX_ELEMENTS)]


class ErrorReport(msgspec.Struct):
    """A worker's error report: the fields the grader reads (others are ignored)."""

    type: Name = "Error"
    message: Message = ""
    file: Line | None = None
    line: Annotated[int, msgspec.Meta(ge=0, le=10**9)] | None = None
    function: Line | None = None
    frames: Annotated[list[Line], msgspec.Meta(max_length=MAX_FRAMES)] = []
    limit: Name | None = None


class Output(msgspec.Struct, kw_only=True):
    """What a call printed: the lines the worker kept, and how many it left out after
    them, which only a worker that kept some lines can have left out."""

    output: Message = ""
    output_cut: Annotated[int, msgspec.Meta(ge=0, le=MAX_CUT_LINES)] = 0


class Failed(Output):
    error: ErrorReport


class Returned(Output):
    ok: Literal[True]
    result: Any  # decoded on its own, by encoding.decode
    # The arguments the call was asked to watch, by their positions, after it.
    after: Annotated[dict[Annotated[str, msgspec.Meta(pattern="^[0-9]{1,4}$")], Any],
                     msgspec.Meta(max_length=MAX_DIMS * 4)] = {}
    # The watched arguments whose memory the result is, or views: not a new tensor.
    shared: Annotated[list[Annotated[int, msgspec.Meta(ge=0, lt=10_000)]],
                      msgspec.Meta(max_length=MAX_DIMS * 4)] = []
    model_changed: bool = False
    # [new tokens, cached tokens] of each forward pass.
    model_calls: Annotated[list[tuple[Tokens, Tokens]],
                           msgspec.Meta(max_length=MAX_MODEL_CALLS)] | None = None


def unreadable(reason: object) -> str:
    """The learner's message for a reply that failed a check."""
    return tr("the submission's process sent an unreadable reply ({reason})", reason=reason)


def held_to(reply: Any, kind: type) -> Any:
    try:
        return msgspec.convert(reply, kind)
    except msgspec.ValidationError as exc:
        raise ProtocolError(str(exc)[:300]) from None


def read_error(error: Any) -> dict[str, Any]:
    """A worker's error report, with only the fields the grader reads, each checked."""
    return error_fields(held_to(error, ErrorReport))


def error_fields(error: ErrorReport) -> dict[str, Any]:
    report = msgspec.structs.asdict(error)
    # An empty name is no name: shown as if the worker had given none.
    return {key: value or None if key in ("file", "function", "limit") else value
            for key, value in report.items()}


def read_load_reply(reply: dict) -> dict[str, Any] | None:
    """The error that stopped a submission from loading, or None if it loaded."""
    if "error" in reply:
        return read_error(reply["error"])
    if reply.get("ok") is not True:
        raise ProtocolError("a reply to `load` with neither ok nor error")
    return None


def printed(reply: Output) -> Printed:
    if reply.output_cut and not reply.output:
        raise ProtocolError("lines left out of an output that kept none")
    return Printed.of(reply.output, reply.output_cut)


def read_call_reply(reply: dict) -> dict[str, Any]:
    """A reply to `call`, checked and decoded: the fields of a CallOutcome."""
    if "error" in reply:
        failed = held_to(reply, Failed)
        return {"error": error_fields(failed.error), "output": printed(failed)}
    returned = held_to(reply, Returned)
    return {"result": decode(returned.result), "model_changed": returned.model_changed,
            "after": {int(key): decode(value) for key, value in returned.after.items()},
            "shared": list(returned.shared),
            "model_calls": [list(call) for call in returned.model_calls]
            if returned.model_calls is not None else None, "output": printed(returned)}


def read_item_reply(reply: dict) -> tuple[str, Any]:
    """A reply to `next`: ("item", value), ("done", None) or ("error", report)."""
    if "error" in reply:
        return "error", read_error(reply["error"])
    if reply.get("done") is True:
        return "done", None
    if reply.get("ok") is not True or "item" not in reply:
        raise ProtocolError("a reply to `next` with no item")
    return "item", decode(reply["item"])
