"""Dropping every capability a worker holds, for good."""

from __future__ import annotations

import contextlib
import ctypes
import struct

from grader.sandbox.worker.layers import syscalls

_LINUX_CAPABILITY_VERSION_3 = 0x20080522

def drop() -> bool:
    """Drop every capability, for good; True if there were any to drop.

    In a user namespace mapped to root, or for a grader started as root without
    namespaces, the child would otherwise hold capabilities.
    """
    libc = syscalls.libc()
    if libc is None:
        return False
    try:
        caps = {k: int(v, 16) for k, v in syscalls.proc_status().items() if k.startswith("Cap")}
    except (OSError, ValueError):
        return False
    # The bounding set alone gives nothing without execve, which Landlock denies.
    if not any(caps.get(k, 0) for k in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
        return False
    with contextlib.suppress(OSError):
        syscalls.prctl(syscalls.PR_CAP_AMBIENT, syscalls.PR_CAP_AMBIENT_CLEAR_ALL)
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="utf-8") as last:
            last_cap = int(last.read())
    except (OSError, ValueError):
        last_cap = 63
    for cap in range(last_cap + 1):
        # Needs CAP_SETPCAP; without it the bounding set cannot matter anyway, as
        # execve is forbidden by Landlock and no_new_privs.
        with contextlib.suppress(OSError):
            syscalls.prctl(syscalls.PR_CAPBSET_DROP, cap)
    header = struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two zeroed {effective, permitted, inheritable} words
    syscalls.check(libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)), "capset")
    return True
