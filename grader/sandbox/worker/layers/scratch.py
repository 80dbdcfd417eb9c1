"""The worker's scratch folder as a size-limited tmpfs of its own.

RLIMIT_FSIZE bounds one file; nothing bounded them all together, so a worker
could fill the disk the grader writes its reports to. Here the worker makes a
user and mount namespace of its own and mounts a tmpfs of `size` bytes over
its scratch folder: only it sees the files (the grader's folder stays empty,
and removing it removes everything), and they go when its last process does.
A write past the size fails with ENOSPC. The pages count against the worker's
memory cgroup as well, where it has one.

The worker ends in a further user namespace with no ids mapped, so that the
submission cannot make namespaces (and mounts) of its own.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 2, 4, 8
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _ids_mapped() -> bool:
    try:
        with open("/proc/self/uid_map", encoding="utf-8") as uid_map:
            return bool(uid_map.read().split())
    except OSError:
        return False


def _map_own_ids(uid: int, gid: int) -> None:
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
            handle.write(text)


def available() -> bool:
    """Whether the calling process can make the namespaces: its ids must be mapped."""
    return _ids_mapped()


def mount_scratch(folder: str, size: int) -> None:
    """Mount a tmpfs of `size` bytes over `folder`, seen by this process alone.

    Call it single-threaded, before Landlock (which forbids mounting) and before
    anything is opened in `folder`. Raises OSError where the system refuses.
    """
    if not _ids_mapped():
        raise OSError(errno.EPERM, "no user ids mapped here: no namespace can be made")
    libc = _libc()
    ids = os.geteuid(), os.getegid()
    # A user namespace of our own gives the right to mount in a mount namespace of our own.
    _call(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS), "unshare")
    _map_own_ids(*ids)
    # Nothing mounted here may reach the mount namespace we came from.
    _call(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate")
    options = f"size={max(int(size), 4096)},mode=0700,nr_inodes=4096".encode()
    _call(libc.mount(b"gpt-kata-scratch", os.fsencode(folder), b"tmpfs",
                     _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, options), "mount tmpfs")


def unmap_ids() -> None:
    """Continue in a user namespace with no ids mapped: none can be made from it."""
    _call(_libc().unshare(_CLONE_NEWUSER), "unshare")
