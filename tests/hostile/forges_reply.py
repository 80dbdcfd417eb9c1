"""Writes a reply of its own straight into the grader's channel, then answers.

The channel is a socket this process inherited; its descriptor is not given to
the submission, but a list of open descriptors finds it. KIND picks the forgery
(the tests set it per problem); each breaks one rule the grader must check.
"""

import base64
import json
import os
import stat
import struct
import threading

KIND = "negative-shape"


def tensor(dtype, shape, data):
    return {"__tensor__": {"dtype": dtype, "shape": shape,
                           "data": base64.b64encode(data).decode()}}


RESULTS = {
    "negative-shape": tensor("float32", [-1, 4], b""),
    "shape-bytes-mismatch": tensor("float32", [2, 3], b"\0" * 5),
    "unknown-dtype": tensor("complex64", [1], b"\0" * 8),
    "generator-state-3-bytes": {"__generator__": tensor("uint8", [3], b"\1\2\3")},
    "huge-element-count": tensor("float32", [1 << 40, 1 << 20], b"\0" * 4),
    "error-not-an-object": None,  # a reply whose error report is a bare string
}


def chunks():
    """The frame, in pieces: a 100 MB one is never built whole."""
    if KIND == "string-100mb":
        size = 100 << 20
        head, tail = b'{"ok": true, "result": "', b'"}'
        yield struct.pack(">I", len(head) + size + len(tail)) + head
        for _ in range(size >> 20):
            yield b"x" * (1 << 20)
        yield tail
        return
    if KIND == "nesting-600":
        text = '{"ok": true, "result": ' + '{"__list__": [' * 600 + "1" + "]}" * 600 + "}"
    elif KIND == "error-not-an-object":
        text = json.dumps({"error": "not a report"})
    else:
        text = json.dumps({"ok": True, "result": RESULTS[KIND]})
    data = text.encode()
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
