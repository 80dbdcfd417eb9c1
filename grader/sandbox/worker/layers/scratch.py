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

import errno
import os

from grader.sandbox.worker.layers.syscalls import (
    CLONE_NEWNS,
    CLONE_NEWUSER,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    check,
    linux_libc,
    uid_map,
)


def map_own_ids(uid: int, gid: int) -> None:
    """Be `uid` and `gid` inside the user namespace just made, as outside."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
            handle.write(text)


def available() -> bool:
    """Whether the calling process can make the namespaces: its ids must be mapped."""
    return bool(uid_map())


def mount_scratch(folder: str, size: int) -> None:
    """Mount a tmpfs of `size` bytes over `folder`, seen by this process alone.

    Call it single-threaded, before Landlock (which forbids mounting) and before
    anything is opened in `folder`. Raises OSError where the system refuses.
    """
    if not available():
        raise OSError(errno.EPERM, "no user ids mapped here: no namespace can be made")
    libc = linux_libc()
    ids = os.geteuid(), os.getegid()
    # A user namespace of our own gives the right to mount in a mount namespace of our own.
    check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    map_own_ids(*ids)
    # Nothing mounted here may reach the mount namespace we came from.
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate")
    options = f"size={max(int(size), 4096)},mode=0700,nr_inodes=4096".encode()
    check(libc.mount(b"gpt-kata-scratch", os.fsencode(folder), b"tmpfs",
                     MS_NOSUID | MS_NODEV | MS_NOEXEC, options), "mount tmpfs")


def unmap_ids() -> None:
    """Continue in a user namespace with no ids mapped: none can be made from it."""
    check(linux_libc().unshare(CLONE_NEWUSER), "unshare")
