"""The C library and prctl(2), for the layers that call the kernel directly."""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import sys

PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_GET_NO_NEW_PRIVS = 39
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
# unshare(2)'s namespaces and mount(2)'s flags, for the scratch tmpfs and the fork
# server's namespaces.
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_REC, MS_PRIVATE = 0x4000, 0x40000


@functools.cache
def libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.syscall.restype = ctypes.c_long
        return lib
    except (OSError, AttributeError):
        return None


def check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def linux_libc() -> ctypes.CDLL:
    """The C library, or OSError where there is none to call (not Linux)."""
    lib = libc()
    if lib is None:
        raise OSError(errno.ENOSYS, "the kernel's calls are made on Linux only")
    return lib


def prctl(option: int, arg: int = 0, *rest: int) -> int:
    lib = linux_libc()
    args = [ctypes.c_ulong(a) for a in (arg, *rest)]
    args += [ctypes.c_ulong(0)] * (4 - len(args))
    return check(lib.prctl(option, *args), f"prctl({option})")


def proc_status(pid: int | str = "self") -> dict[str, str]:
    """The fields of a process's /proc/PID/status, by name; OSError where it cannot be read."""
    with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as status:
        return dict(line.split(":", 1) for line in status if ":" in line)


# /proc/self/uid_map outside any user namespace: every id, mapped to itself.
NO_USER_NAMESPACE = ["0", "0", "4294967295"]


def uid_map() -> list[str] | None:
    """The numbers of /proc/self/uid_map; None where it cannot be read."""
    try:
        with open("/proc/self/uid_map", encoding="utf-8") as mapped:
            return mapped.read().split()
    except OSError:
        return None


def machine() -> str:
    return os.uname().machine if hasattr(os, "uname") else ""
