"""Landlock: what a worker may read, write and execute, no TCP, no signals or
abstract sockets outside the sandbox (linux/landlock.h)."""

from __future__ import annotations

import ctypes
import enum
import os
import stat
from typing import TYPE_CHECKING

from grader.sandbox.worker.layers import syscalls

if TYPE_CHECKING:
    from grader.sandbox.worker.layers.policy import Policy

# The syscall numbers were allocated after the per-architecture tables were unified,
# so they are the same everywhere Landlock exists (alpha aside, which has none here).
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

# The filesystem rights (LANDLOCK_ACCESS_FS_*), in the kernel's bit order: the first
# is bit 0. REFER came with ABI 2, TRUNCATE with ABI 3, IOCTL_DEV with ABI 5.
_FS = enum.IntFlag("_FS", "EXECUTE WRITE_FILE READ_FILE READ_DIR REMOVE_DIR REMOVE_FILE "
                   "MAKE_CHAR MAKE_DIR MAKE_REG MAKE_SOCK MAKE_FIFO MAKE_BLOCK MAKE_SYM "
                   "REFER TRUNCATE IOCTL_DEV")
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6

# The newest ABI whose rights this module knows. A newer kernel still accepts a
# ruleset written for this one; rights added later are simply not handled.
_KNOWN_ABI = 7

# Rights that may be granted on a file rather than a directory: the kernel refuses
# the others with EINVAL when the rule's path is not a directory.
_FS_FILE_RIGHTS = _FS.EXECUTE | _FS.WRITE_FILE | _FS.READ_FILE | _FS.TRUNCATE | _FS.IOCTL_DEV


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # everything ABI 1 knows
    if abi >= 2:
        rights |= _FS.REFER
    if abi >= 3:
        rights |= _FS.TRUNCATE
    if abi >= 5:
        rights |= _FS.IOCTL_DEV
    return rights


def _net_rights(abi: int) -> int:
    return _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0


def _scopes(abi: int) -> int:
    return _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if abi >= 6 else 0


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    # The kernel's struct is packed: 12 bytes, no padding after the descriptor.
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]



def abi() -> int:
    """The running kernel's Landlock ABI version, or 0 where there is none."""
    libc = syscalls.libc()
    if libc is None:
        return 0
    try:
        version = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                               ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)



def apply(policy: Policy, abi: int) -> None:
    """Restrict the calling thread and its future children to `policy`'s paths."""
    libc = syscalls.libc()
    assert libc is not None
    abi = min(abi, _KNOWN_ABI)
    fs = _fs_rights(abi)
    read = _FS.READ_FILE | _FS.READ_DIR | (_FS.EXECUTE if policy.allow_exec else 0)
    attr = _RulesetAttr(int(fs), _net_rights(abi), _scopes(abi))
    # Older kernels know a shorter struct; give each the size it expects.
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = syscalls.check(libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr),
                                  ctypes.c_size_t(size), ctypes.c_uint32(0)),
                     "landlock_create_ruleset")
    try:
        rules: list[tuple[str, int]] = [(p, read) for p in policy.readable]
        # Writing to /dev/null is what "discard" means; Python opens it that way.
        rules.append(("/dev/null", _FS.READ_FILE | _FS.WRITE_FILE | _FS.TRUNCATE))
        if policy.scratch is not None:
            rules.append((policy.scratch, fs & ~(0 if policy.allow_exec else _FS.EXECUTE)))
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path that does not exist needs no rule
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    access &= _FS_FILE_RIGHTS
                beneath = _PathBeneathAttr(int(access & fs), fd)
                syscalls.check(libc.syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset),
                                    ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH),
                                    ctypes.byref(beneath), ctypes.c_uint32(0)),
                       f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        syscalls.check(libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset),
                            ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)

