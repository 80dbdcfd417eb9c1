"""A seccomp filter: no new sockets, memfd files, System V IPC, file metadata
changes or changes of user or group id; a refused call fails with EPERM, and
`refused_call` names the rule from the line that made it."""

from __future__ import annotations

import ctypes
import errno
import re
import traceback

from grader.locale import tr
from grader.sandbox.worker.layers import syscalls

_SECCOMP_MODE_FILTER = 2

# Per architecture: the audit tag the kernel hands a seccomp filter, and the
# numbers of socket(2) and io_uring_setup(2) (io_uring can create sockets too).
_SECCOMP_ARCHES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
    "arm64": (0xC00000B7, 198, 425),
}
_X32_SYSCALL_BIT = 0x40000000
# Calls that change a file's mode, owner, times or extended attributes. Landlock
# does not govern them, and the user namespace maps the worker to the grader's
# own uid, so the worker owns every file the grader's user owns; for a grader run
# as root that is every root-owned file, and chmod u+s would make any of them
# setuid root on the host. Per architecture: the chmod, chown, utime and
# setxattr/removexattr families, the legacy ones only where they exist.
_SECCOMP_METADATA = {
    "x86_64": (90, 91, 268, 452, 92, 93, 94, 260, 132, 235, 261, 280,
               188, 189, 190, 197, 198, 199, 463, 466),
    "aarch64": (52, 53, 452, 55, 54, 88, 5, 6, 7, 14, 15, 16, 463, 466),
}
_SECCOMP_METADATA["arm64"] = _SECCOMP_METADATA["aarch64"]
# memfd_create and memfd_secret: a memfd's pages are in no file system and,
# written with write(2) and never mapped, under no rlimit. System V shared
# memory, message queues and semaphores (shmget, msgget, semget): they outlive
# the process, outside any limit. The set*id calls: the workers' real uid is an
# unprivileged one while their effective uid is the grader's, and without this
# a submission could set the real one back (setuid, setgid, setreuid, setregid,
# setgroups, setresuid, setresgid, setfsuid, setfsgid).
_SECCOMP_MORE = {
    "x86_64": (319, 447, 29, 68, 64, 105, 106, 113, 114, 116, 117, 119, 122, 123),
    "aarch64": (279, 447, 194, 186, 190, 146, 144, 145, 143, 159, 147, 149, 151, 152),
}
_SECCOMP_MORE["arm64"] = _SECCOMP_MORE["aarch64"]


def available() -> bool:
    """Whether this machine can filter system calls (probed in the grader)."""
    if syscalls.machine() not in _SECCOMP_ARCHES:
        return False
    try:
        return "Seccomp" in syscalls.proc_status()
    except OSError:
        return False

class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def apply() -> None:
    """Refuse socket(2), io_uring_setup(2), file metadata changes, memfd_create(2)
    and changes of user or group id with EPERM.

    Landlock (before ABI 9) does not cover connecting to a Unix socket by path,
    and the network namespace does not either, since such sockets live in the
    file system. Sockets the process already holds keep working. Nor does
    Landlock cover chmod, chown, utime or xattrs (see _SECCOMP_METADATA), and
    no limit covers what _SECCOMP_MORE refuses.
    """
    arch, nr_socket, nr_io_uring = _SECCOMP_ARCHES[syscalls.machine()]
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    kill_process, allow, deny = 0x80000000, 0x7FFF0000, 0x00050000 | errno.EPERM
    program = [
        (ld_w_abs, 0, 0, 4),  # seccomp_data.arch
        (jeq_k, 1, 0, arch),
        (ret_k, 0, 0, kill_process),  # another ABI (int 0x80 on x86_64)
        (ld_w_abs, 0, 0, 0),  # seccomp_data.nr
        (jge_k, 0, 1, _X32_SYSCALL_BIT),  # x32 numbers: another ABI too
        (ret_k, 0, 0, kill_process),
        (jeq_k, 0, 1, nr_socket),
        (ret_k, 0, 0, deny),
        (jeq_k, 0, 1, nr_io_uring),
        (ret_k, 0, 0, deny),
        *[ins for nr in (*_SECCOMP_METADATA[syscalls.machine()], *_SECCOMP_MORE[syscalls.machine()])
          for ins in ((jeq_k, 0, 1, nr), (ret_k, 0, 0, deny))],
        (ret_k, 0, 0, allow),
    ]
    if syscalls.machine() != "x86_64":
        # Only x86_64 has the x32 bit to worry about.
        program = program[:4] + program[6:]
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    fprog = _SockFprog(len(program), filters)
    syscalls.prctl(syscalls.PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog))

# The calls the seccomp filter refuses, by the names a call site gives them, and the
# rule each group stands for (said by `_rule`). The filter answers EPERM, which says
# nothing about why: without the rule named, a learner would look for the fault in
# their own code.
_SECCOMP_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("memfd_create", "memfd_secret", "shmget", "msgget", "semget"), "memory"),
    (("setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
      "initgroups", "setfsuid", "setfsgid"), "ids"),
    (("chmod", "fchmod", "lchmod", "chown", "fchown", "lchown", "utime", "utimes",
      "setxattr", "removexattr"), "metadata"),
    (("socket", "socketpair", "io_uring_setup"), "sockets"),
)
_SECCOMP_CALL = re.compile(r"\b(" + "|".join(name for names, _ in _SECCOMP_RULES
                                              for name in names) + r")\b")


def _rule(group: str) -> str:
    """The rule a group of refused calls stands for, in the language in use."""
    return {
        "memory": tr("no memfd files and no System V shared memory, message queues or "
                     "semaphores, whose memory no limit counts"),
        "ids": tr("no change of user or group id"),
        "metadata": tr("no change to a file's mode, owner, times or extended attributes"),
        "sockets": tr("no new sockets (the sandbox has no network)"),
    }[group]


def refused_call(exc: BaseException) -> str | None:
    """The sentence naming the seccomp rule an EPERM stands for, when the line that
    raised it (the innermost frame: the call into the system) names a refused call."""
    if not isinstance(exc, OSError) or exc.errno != errno.EPERM or exc.__traceback__ is None:
        return None
    frames = traceback.extract_tb(exc.__traceback__)
    match = _SECCOMP_CALL.search(frames[-1].line or "") if frames else None
    if match is None:
        return None
    name = match.group(1)
    group = next(group for names, group in _SECCOMP_RULES if name in names)
    return tr("the sandbox refused {call}(): its seccomp filter allows {rule}", call=name,
              rule=_rule(group))
