"""Starts a process that leaves its parent's session and keeps writing a file.

A double fork and setsid make it an orphan in a session of its own. It names
itself MARKER (and tries to exec so that its command line carries it too), then
tries every 0.2 s for 30 s to create TARGET. Once the grade is over, no such
process may be alive and TARGET must not exist.
"""

import ctypes
import os
import sys
import time

MARKER = "gptkata-daemon"
TARGET = ""

LOOP = f"""
import time
for _ in range(150):
    try:
        open({TARGET!r}, "w").write("still here")
    except OSError:
        pass
    time.sleep(0.2)
"""


def daemon():
    os.setsid()
    if os.fork():
        os._exit(0)
    try:
        ctypes.CDLL(None).prctl(15, MARKER.encode(), 0, 0, 0)  # PR_SET_NAME
    except Exception:  # noqa: BLE001
        pass
    try:
        os.execv(sys.executable, [sys.executable, "-c", LOOP, MARKER])
    except OSError:
        pass
    for _ in range(150):
        try:
            with open(TARGET, "w") as out:
                out.write("still here")
        except OSError:
            pass
        time.sleep(0.2)
    os._exit(0)


class Solution:
    def crop_context(self, *args, **kwargs):
        pid = os.fork()
        if pid == 0:
            try:
                daemon()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        raise RuntimeError(f"started a detached process from pid {pid}")
