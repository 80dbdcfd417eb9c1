"""What a reached limit, or a call the sandbox refused, looks like afterwards:
the sentence a learner is shown for an exception or a fatal signal."""

from __future__ import annotations

import errno
import signal
from typing import TYPE_CHECKING

from grader.locale import tr
from grader.sandbox.worker.layers.seccomp import refused_call

if TYPE_CHECKING:
    from grader.sandbox.worker.layers.policy import Policy

MB = 1 << 20

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
    if signum is not None:
        if signum == getattr(signal, "SIGXCPU", None) and policy.cpu_seconds is not None:
            return tr("the CPU time limit ({seconds} s) was reached",
                      seconds=policy.cpu_seconds)
        if signum == getattr(signal, "SIGXFSZ", None):
            size = policy.max_file_bytes or 0
            return tr("the file size limit ({size} MB) was reached", size=size // MB)
    return None
