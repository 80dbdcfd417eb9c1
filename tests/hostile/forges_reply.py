"""Writes a reply of its own straight into the grader's channel, then answers.

The channel is a socket this process inherited; its descriptor is not given to
the submission, but a list of open descriptors finds it. KIND picks the forgery
(the tests set it per problem); each breaks one rule the grader must check.
"""

import os
import stat
import struct
import threading

import msgspec

KIND = "negative-shape"


def tensor(dtype, shape, data):
    return {"type": "tensor", "dtype": dtype, "shape": shape, "data": data}


RESULTS = {
    "negative-shape": tensor("float32", [-1, 4], b""),
    "shape-bytes-mismatch": tensor("float32", [2, 3], b"\0" * 5),
    "unknown-dtype": tensor("complex64", [1], b"\0" * 8),
    "generator-state-3-bytes": {"type": "generator", "state": b"\1\2\3"},
    "huge-element-count": tensor("float32", [1 << 40, 1 << 20], b"\0" * 4),
    "error-not-an-object": None,  # a reply whose error report is a bare string
}


def chunks():
    """The frame, in pieces: a 100 MB one is never built whole."""
    if KIND == "string-100mb":
        size = 100 << 20
        # {"ok": true, "result": <a str of `size` bytes>}: str 32's header, then the text.
        head = b"\x82\xa2ok\xc3\xa6result\xdb" + struct.pack(">I", size)
        yield struct.pack(">I", len(head) + size) + head
        for _ in range(size >> 20):
            yield b"x" * (1 << 20)
        return
    if KIND == "nesting-600":
        # {"type": "list", "items": [...]} 600 deep, written by hand: msgspec's encoder
        # would refuse to go so deep.
        one = b"\x82\xa4type\xa4list\xa5items\x91"
        data = b"\x82\xa2ok\xc3\xa6result" + one * 600 + b"\x01"
    elif KIND == "error-not-an-object":
        data = msgspec.msgpack.encode({"error": "not a report"})
    else:
        data = msgspec.msgpack.encode({"ok": True, "result": RESULTS[KIND]})
    yield struct.pack(">I", len(data)) + data


def sockets():
    """Every socket descriptor this process holds."""
    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
    except OSError:  # /proc may be out of reach: try every descriptor instead
        fds = list(range(3, 256))
    for fd in fds:
        try:
            if stat.S_ISSOCK(os.fstat(fd).st_mode):
                yield fd
        except OSError:
            pass


def forge(fd):
    try:
        for chunk in chunks():
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
    except OSError:
        pass


class Solution:
    def crop_context(self, *args, **kwargs):
        # One thread per socket: a write the other end does not read must not
        # stop the forgery from reaching the channel.
        writers = [threading.Thread(target=forge, args=(fd,), daemon=True)
                   for fd in sockets()]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(1.0)
        return args[0] if args else None
