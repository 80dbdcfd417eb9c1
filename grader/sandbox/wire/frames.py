"""How messages cross between the grader and a worker: msgpack maps, each framed by a
4-byte length, read with limits on size and depth that hold whatever the other side
writes. What a message holds is grader.sandbox.wire.encoding's (values) and
grader.sandbox.wire.replies' (the replies the grader accepts).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import IO, Any

import msgspec

from grader.sandbox.wire.encoding import MAX_DEPTH, ProtocolError

MAX_FRAME = 64 * 1024 * 1024
HEADER = struct.Struct(">I")
# The levels of one message: a value MAX_DEPTH deep takes up to three levels a level
# (a dict is {"type": "dict", "pairs": [[key, value]]}), and a message wraps it in a few.
MAX_NESTING = 3 * (MAX_DEPTH + 1) + 8
TOO_DEEP = f"a message nested too deeply to read (more than {MAX_NESTING} levels)"


def pack(message: dict) -> bytes:
    """One message as its frame: the length, then the msgpack."""
    try:
        data = msgspec.msgpack.encode(message)
    except UnicodeEncodeError:
        # Text the submission printed or raised, with a lone surrogate that UTF-8
        # cannot hold: sent as its escape, as every report shows it. (Its values
        # carry such text exactly: encoding.Text.)
        data = msgspec.msgpack.encode(escaped(message))
    return HEADER.pack(len(data)) + data


def escaped(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode()
    if isinstance(value, dict):
        return {escaped(key): escaped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [escaped(item) for item in value]
    return value


def write_frame(stream: IO[bytes], message: dict) -> None:
    stream.write(pack(message))
    stream.flush()


class Oversized(ProtocolError):
    """A frame larger than this reader takes. Its bytes were read and dropped, a
    block at a time, so the stream is still in step and the reader can answer."""


def read_frame(stream: IO[bytes],
               limit: int | Callable[[], int] = MAX_FRAME) -> dict | None:
    """One message, or None at end of stream; `limit` bytes at most (Oversized).

    A callable `limit` is asked once the frame's header has come: a reader that
    waits for the next message may learn meanwhile what it will take.
    """
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ProtocolError(f"a message of {size} bytes, larger than the {MAX_FRAME} allowed")
    if callable(limit):
        limit = limit()
    if size > limit:
        if not _skip(stream, size):
            return None
        raise Oversized(f"a message of {size} bytes, larger than the {limit} allowed")
    data = stream.read(size)
    if len(data) < size:
        return None
    try:
        message = msgspec.msgpack.decode(data)
    except RecursionError:
        # The decoder recurses per level; a thread that let this escape
        # would die silently and leave the call waiting for its time-out.
        raise ProtocolError(TOO_DEEP) from None
    except MemoryError:
        raise ProtocolError("a message too large to read") from None
    except (msgspec.DecodeError, ValueError, TypeError) as exc:
        raise ProtocolError(f"not msgpack: {str(exc)[:200]}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a map")
    # How deep the decoder itself goes before it gives up depends on the Python
    # version's recursion limit, so the protocol's own limit is checked here.
    if nested_deeper(message, MAX_NESTING):
        raise ProtocolError(TOO_DEEP)
    return message


def _skip(stream: IO[bytes], size: int) -> bool:
    """Read and drop `size` bytes; False if the stream ended first."""
    while size > 0:
        block = stream.read(min(size, 1 << 20))
        if not block:
            return False
        size -= len(block)
    return True


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether decoded data holds lists and maps more than `limit` levels deep
    (the top one is level 1); walked without recursion."""
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        todo.extend((child, depth + 1) for child in children
                    if isinstance(child, (dict, list)))
    return False
