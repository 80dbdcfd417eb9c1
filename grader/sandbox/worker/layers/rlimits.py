"""Resource limits on the worker process itself: memory, CPU time, file size,
open files, no core files, and its count of tasks (RLIMIT_NPROC)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from grader.sandbox.worker.layers import syscalls

if TYPE_CHECKING:
    from grader.sandbox.worker.layers.policy import Policy

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

MB = 1 << 20

def status_kb(key: str) -> int | None:
    try:
        return int(syscalls.proc_status()[key].split()[0]) * 1024
    except (OSError, KeyError, ValueError, IndexError):
        return None


def _tasks_of_user(uid: int) -> int:
    """Processes and threads of ``uid`` that /proc shows (what RLIMIT_NPROC counts)."""
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            fields = syscalls.proc_status(entry)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return count


# A limit past this is no limit: the kernel's limits are 64-bit, and Python refuses
# numbers it cannot pass as one.
NO_LIMIT_PAST = 1 << 62


def _set_limit(which: int, soft: int, hard: int | None = None) -> None:
    assert resource is not None
    _current_soft, current_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    infinity = resource.RLIM_INFINITY
    soft, hard = (infinity if v >= NO_LIMIT_PAST else v for v in (soft, hard))
    if current_hard != infinity:
        # An unprivileged process cannot raise its hard limit; stay below it.
        hard = current_hard if hard == infinity else min(hard, current_hard)
        soft = hard if soft == infinity else min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def memory_limits(budget: int) -> tuple[int, int]:
    """The RLIMIT_DATA and RLIMIT_AS values that give ``budget`` bytes of headroom.

    RLIMIT_DATA counts private writable memory, which is what tensors, lists and
    bytearrays use, so it carries the budget. RLIMIT_AS also counts shared
    mappings (``mmap.mmap(-1, n)``), but torch, glibc and thread stacks reserve
    address space they never touch, so it is set looser, as a backstop.
    """
    data = (status_kb("VmData") or 0) + budget
    space = (status_kb("VmSize") or 0) + 2 * budget + 256 * MB
    return data, space


def apply(policy: Policy, own_user_namespace: bool = False) -> list[str]:
    assert resource is not None
    layers = ["rlimits"]
    _set_limit(resource.RLIMIT_CORE, 0)  # no core files in scratch or anywhere
    # Only Linux enforces RLIMIT_DATA on mmap'd memory, and only there can the
    # current footprint be read to place the limit above it.
    if policy.memory_bytes is not None and status_kb("VmData") is not None:
        data, space = memory_limits(policy.memory_bytes)
        _set_limit(resource.RLIMIT_DATA, data)
        _set_limit(resource.RLIMIT_AS, space)
        layers.append("memory-limit")
    if policy.cpu_seconds is not None:
        # SIGXCPU at the soft limit; SIGKILL at the hard one, should it be caught.
        _set_limit(resource.RLIMIT_CPU, policy.cpu_seconds, policy.cpu_seconds + 1)
    if policy.max_file_bytes is not None:
        _set_limit(resource.RLIMIT_FSIZE, policy.max_file_bytes)
    if policy.max_open_files is not None:
        _set_limit(resource.RLIMIT_NOFILE, policy.max_open_files)
    # Without /proc the user's other processes cannot be counted, and a limit that
    # ignores them could stop this one from starting even a thread.
    if policy.max_processes is not None and hasattr(resource, "RLIMIT_NPROC") \
            and os.path.isdir("/proc/self"):
        # With a pids cgroup, that is the limit reached (the grader can tell it was),
        # and this one a task looser, a backstop.
        backstop = int(any(k.startswith("pids-cgroup") for k in policy.cgroups or {}))
        if own_user_namespace:
            # The kernel counts the tasks of a user namespace apart from the rest:
            # in one this process just made, there are only its own threads.
            running = (status_kb("Threads") or 1024) // 1024  # a count, not kB
            _set_limit(resource.RLIMIT_NPROC, running + policy.max_processes + backstop)
        else:
            running = _tasks_of_user(os.getuid())
            # The launcher itself is in the user namespace but outside our /proc.
            _set_limit(resource.RLIMIT_NPROC, running + 1 + policy.max_processes + backstop)
    return layers


def available() -> bool:
    """Whether this platform has resource limits (Windows has none)."""
    return resource is not None
