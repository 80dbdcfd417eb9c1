"""Isolation primitives for the process that runs a learner's submission.

Three steps, each made of layers that are used where the machine has them:

* ``probe()`` (in the grader) finds which layers this machine offers.
* ``launcher_prefix(probe())`` is an argv prefix that starts the long-lived fork
  server in new user, network, PID and mount namespaces: no network at all, its
  own ``/proc``, and, because the fork server is PID 1 there, every process it or
  its children start is killed by the kernel when it ends.
* ``isolate(policy)`` runs in each freshly forked, single-threaded child before
  any learner code is loaded: new session, resource limits, no new privileges,
  death with the parent, no capabilities, a Landlock ruleset (read-only access to
  what Python needs, read-write to a scratch folder, no TCP, no signals or
  abstract sockets outside the sandbox) and a seccomp filter against new
  sockets, memfd files and changes of user or group id.

Limits on the worker's whole tree (`grader.sandbox.layers`), where the machine
allows: a cgroup of its own for memory and a process count (made by the grader
with ``worker_limits()``, joined by ``isolate``), and a scratch folder that is a
size-limited tmpfs of its own. When the grader runs as root, the fork server's
real uid is an unprivileged one (``UNPRIVILEGED_UID``, set by the launcher), so
that RLIMIT_NPROC applies to the workers; their effective uid stays the
grader's, so that what Landlock lets them read stays readable.

What a reached limit looks like afterwards (for the caller's messages):

* memory (RLIMIT_DATA, plus a looser RLIMIT_AS backstop; Linux only): the
  allocation fails. Python raises ``MemoryError``; torch raises ``RuntimeError``
  ("DefaultCPUAllocator: can't allocate memory"); ``mmap`` raises
  ``OSError(ENOMEM)``; a thread that cannot get a stack fails to start. The
  process stays alive, so the caller should test the exception with
  ``out_of_memory()``. Native code that does not check its allocations may
  still crash (SIGSEGV or SIGABRT). Shared mappings (``mmap.mmap(-1, n)``) are
  not private data: only the RLIMIT_AS backstop (twice the budget) bounds them.
* CPU time (RLIMIT_CPU): SIGXCPU at the soft limit, SIGKILL one second later.
* file size (RLIMIT_FSIZE): Python ignores SIGXFSZ, so the write raises
  ``OSError(EFBIG)``.
* processes (RLIMIT_NPROC, and the pids cgroup): ``fork`` or thread start
  fails with EAGAIN (``BlockingIOError`` / ``RuntimeError("can't start new
  thread")``). The kernel never applies RLIMIT_NPROC to a process whose real uid
  is 0, in a user namespace or not: hence the unprivileged real uid.
* the memory cgroup (all the worker's processes, with their memfd and tmpfs
  pages): the kernel ends the largest process of the group. The grader reads
  that from the group (``TreeLimits.reached()``), since the worker may be the one.
* scratch (the tmpfs's size): the write raises ``OSError(ENOSPC)``.
* a call the seccomp filter refuses (memfd files, System V IPC, set*id, file
  metadata, sockets): it fails with ``OSError(EPERM)``; ``refused_call()`` names
  the rule from the line that made the call.

``limit_message()`` turns either an exception or a fatal signal into a sentence.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import re
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import sysconfig
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.sandbox.layers import cgroups, scratch
from grader.sandbox.layers.cgroups import TreeLimits

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

MB = 1 << 20
# The real uid of a fork server started by a grader that runs as root ("nobody").
UNPRIVILEGED_UID = 65534
DEFAULT_SCRATCH_BYTES = scratch.DEFAULT_BYTES

# --- Landlock (linux/landlock.h) -------------------------------------------------------
# The syscall numbers were allocated after the per-architecture tables were unified,
# so they are the same everywhere Landlock exists (alpha aside, which has none here).
_SYS_LANDLOCK_CREATE_RULESET = 444
_SYS_LANDLOCK_ADD_RULE = 445
_SYS_LANDLOCK_RESTRICT_SELF = 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1

_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REMOVE_DIR = 1 << 4
_FS_REMOVE_FILE = 1 << 5
_FS_MAKE_CHAR = 1 << 6
_FS_MAKE_DIR = 1 << 7
_FS_MAKE_REG = 1 << 8
_FS_MAKE_SOCK = 1 << 9
_FS_MAKE_FIFO = 1 << 10
_FS_MAKE_BLOCK = 1 << 11
_FS_MAKE_SYM = 1 << 12
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6

# The newest ABI whose rights this module knows. A newer kernel still accepts a
# ruleset written for this one; rights added later are simply not handled.
_KNOWN_ABI = 7

# Rights that may be granted on a file rather than a directory: the kernel refuses
# the others with EINVAL when the rule's path is not a directory.
_FS_FILE_RIGHTS = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # everything ABI 1 knows
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    if abi >= 5:
        rights |= _FS_IOCTL_DEV
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


# --- prctl, capabilities, seccomp ---------------------------------------------------
_PR_SET_PDEATHSIG = 1
_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_GET_NO_NEW_PRIVS = 39
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_SECCOMP_MODE_FILTER = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

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


@functools.cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        return libc
    except (OSError, AttributeError):
        return None


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def _prctl(option: int, arg: int = 0, *rest: int) -> int:
    libc = _libc()
    if libc is None:
        raise OSError(errno.ENOSYS, "prctl is Linux-only")
    args = [ctypes.c_ulong(a) for a in (arg, *rest)]
    args += [ctypes.c_ulong(0)] * (4 - len(args))
    return _check(libc.prctl(option, *args), f"prctl({option})")


def landlock_abi() -> int:
    """The running kernel's Landlock ABI version, or 0 where there is none."""
    libc = _libc()
    if libc is None:
        return 0
    try:
        version = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                               ctypes.c_uint32(_LANDLOCK_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


# --- what the machine offers ----------------------------------------------------------
@dataclass(frozen=True)
class Isolation:
    """Which layers work on this machine (see ``probe``)."""

    platform: str
    landlock_abi: int = 0
    # The namespace launcher that worked when probed, without the command; empty if none.
    launcher: tuple[str, ...] = ()
    rlimits: bool = False
    prctl: bool = False
    seccomp: bool = False
    # The cgroup layers a worker can be given ("memory-cgroup-v1", ...).
    cgroups: tuple[str, ...] = ()
    # Whether the workers' real uid is not 0, so that RLIMIT_NPROC applies to them.
    unprivileged_uid: bool = False

    @property
    def namespaces(self) -> bool:
        return bool(self.launcher)

    def summary(self) -> list[str]:
        """The layers in words, for a report."""
        layers = []
        if self.launcher:
            layers += ["user-namespace", "network-namespace", "pid-namespace"]
            if "--mount-proc" in self.launcher:
                layers.append("mount-namespace")
        if self.landlock_abi:
            layers.append(f"landlock-abi{self.landlock_abi}")
        if self.rlimits:
            layers.append("rlimits")
        if self.prctl:
            layers.append("no-new-privs")
        if self.seccomp:
            layers.append("seccomp")
        layers += self.cgroups
        if self.launcher:
            layers.append("scratch-tmpfs")
        if self.unprivileged_uid:
            layers.append("unprivileged-uid")
        return layers

    def missing(self) -> list[str]:
        """The tree-wide layers this machine does not give a worker, for a report."""
        missing = [name for name in ("memory-cgroup", "pids-cgroup", "cpu-cgroup")
                   if not _has_layer(self.cgroups, name)]
        if not self.launcher:
            missing.append("scratch-tmpfs")
        if not self.unprivileged_uid:
            missing.append("unprivileged-uid")
        return missing


# Flag sets tried in order. Mapping the caller to an unprivileged uid inside the
# namespace means the fork server holds no capabilities at all there; older
# unshare builds only know --map-root-user, and isolate() then drops the
# capabilities that gives. --mount-proc needs a mount namespace of our own; it
# hides every process outside the sandbox from /proc.
_LAUNCHERS: tuple[tuple[str, ...], ...] = (
    ("--user", "--map-user=65534", "--map-group=65534", "--net", "--pid", "--fork",
     "--kill-child", "--mount-proc"),
    ("--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child", "--mount-proc"),
    ("--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child"),
)


# Exits 0 only where RLIMIT_NPROC applies to it: a fork past a limit of 1 fails.
_NPROC_APPLIES = """
import os, resource
resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
try:
    pid = os.fork()
except OSError:
    raise SystemExit(0)
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
raise SystemExit(3)
"""


def _runs(argv: list[str]) -> int | None:
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=20).returncode
    except (OSError, subprocess.SubprocessError):
        return None


def _unprivileged_prefix() -> tuple[str, ...]:
    """For a grader run as root: start the fork server with an unprivileged real uid.

    Only the real uid changes: RLIMIT_NPROC is counted and enforced by it, while
    files are opened with the effective one, so everything the grader may read
    (a virtual environment under /root, a learner's folder) stays readable to
    the fork server, and Landlock still decides what a worker may read.
    """
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return ()
    return (setpriv, f"--ruid={UNPRIVILEGED_UID}")


def _probe_launcher() -> tuple[tuple[str, ...], bool]:
    """The launcher that works, and whether RLIMIT_NPROC applies to what it starts."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return (), False
    # As root, with the unprivileged real uid first; a launcher without it otherwise.
    prefixes = [p for p in (_unprivileged_prefix(),) if p] + [()]
    for flags in _LAUNCHERS:
        for prefix in prefixes:
            # Run the real interpreter inside: AppArmor and friends may let unshare
            # create the namespaces and still refuse what runs in them.
            argv = [*prefix, unshare, *flags, sys.executable, "-I", "-S", "-c", _NPROC_APPLIES]
            code = _runs(argv)
            if code in (0, 3):
                return (*prefix, unshare, *flags), code == 0
    return (), False


def _probe_seccomp() -> bool:
    if _machine() not in _SECCOMP_ARCHES:
        return False
    try:
        with open("/proc/self/status") as status:
            return any(line.startswith("Seccomp:") for line in status)
    except OSError:
        return False


def _machine() -> str:
    return os.uname().machine if hasattr(os, "uname") else ""


@functools.cache
def probe() -> Isolation:
    """Find the layers this machine offers; cached, never raises.

    Call it in the grader, not in a sandboxed child: it starts a throwaway
    process to see whether namespaces can be created.
    """
    try:
        linux = sys.platform.startswith("linux")
        prctl_ok = False
        if linux and _libc() is not None:
            try:
                _prctl(_PR_GET_NO_NEW_PRIVS)  # harmless, and proves prctl answers
                prctl_ok = True
            except OSError:
                prctl_ok = False
        launcher, unprivileged = _probe_launcher() if linux else ((), False)
        return Isolation(
            platform=sys.platform,
            landlock_abi=landlock_abi() if linux else 0,
            launcher=launcher,
            rlimits=resource is not None,
            prctl=prctl_ok,
            seccomp=linux and prctl_ok and _probe_seccomp(),
            cgroups=tuple(h.layer(c) for h in cgroups.hierarchies() for c in h.controllers)
            if linux else (),
            # Without a launcher, isolate() itself gives a root worker another real uid.
            unprivileged_uid=unprivileged or (linux and not launcher),
        )
    except Exception:  # a probe must not take the grader down
        return Isolation(platform=sys.platform)


def launcher_prefix(isolation: Isolation | None = None) -> list[str]:
    """The argv prefix that starts a command in its own namespaces, or [] if none.

    Inside: a user namespace in which the command has no capabilities, a network
    namespace with only a loopback device that is down, a PID namespace in which
    the command is PID 1 (when it ends, the kernel kills every process left in
    the namespace, however they detached), and its own /proc. --kill-child ties
    the command to the launcher: killing the launcher kills the whole tree.

    As PID 1 the command receives, from outside, only SIGKILL and the signals it
    has handlers for; end it by signalling the launcher, or by closing its channel.
    """
    isolation = probe() if isolation is None else isolation
    return list(isolation.launcher)


def die_with_launcher() -> None:
    """In the command a launcher started: be killed when the launcher dies.

    unshare --kill-child arms a parent-death signal for its child, but an exec
    whose real uid differs from its effective one (``_unprivileged_prefix``)
    clears it, so the command arms it again itself, first thing. Only as PID 1
    of a namespace, whose parent is the single-threaded launcher: the signal
    follows the parent *thread* that started a process.
    """
    if os.getpid() == 1 and _libc() is not None:
        with contextlib.suppress(OSError):
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


# --- the policy -----------------------------------------------------------------------
def clean_environment(scratch: str | os.PathLike[str] | None = None,
                      extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing of the grader's leaks, and one thread per pool."""
    home = os.fspath(scratch) if scratch is not None else "/nonexistent"
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": home,
        "TMPDIR": home,
        "XDG_CACHE_HOME": home,
        "MPLCONFIGDIR": home,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }
    env.update(extra or {})
    return env


@dataclass
class Policy:
    """What a sandboxed child may do. ``None`` leaves a limit as it is.

    ``memory_bytes`` is the headroom above what the process has already mapped when
    ``isolate()`` runs: a child forked from a fork server that imported torch
    starts with about 220 MB of private data and 640 MB of address space, none
    of which the submission should be charged for.
    ``max_processes`` likewise counts tasks (processes and threads) beyond those
    the same user already runs, because RLIMIT_NPROC is per user, not per process.
    """

    readable: list[str] = field(default_factory=list)
    scratch: str | None = None
    memory_bytes: int | None = 1024 * MB
    cpu_seconds: int | None = 120
    max_processes: int | None = 16
    max_file_bytes: int | None = 64 * MB
    max_open_files: int | None = 256
    # Whether programs under the readable paths may be executed. Nothing the worker
    # does needs execve (shared libraries need only read access), so by default a
    # submission cannot start a shell or any other program.
    allow_exec: bool = False
    # Replaces os.environ in the child when set.
    environment: dict[str, str] | None = None
    # Forbid creating sockets (the channel to the grader already exists), and memfd
    # files and changes of user or group id with them.
    forbid_sockets: bool = True
    # The cgroups to join, by the layer each stands for (`TreeLimits.request()`).
    cgroups: dict[str, str] | None = None
    # The size of the tmpfs mounted over scratch; None leaves scratch as it is.
    scratch_bytes: int | None = None
    # Said by the grader, which started the fork server: the workers' real uid is
    # not 0 (inside a user namespace that cannot be seen from the worker).
    unprivileged_uid: bool = False

    @classmethod
    def for_submission(cls, submission: str | os.PathLike[str],
                       scratch: str | os.PathLike[str], **limits: Any) -> Policy:
        """Readable: Python and its packages, and the submission's own folder.

        Where that folder holds (or is) one of the grader's private folders, only
        the submission file itself is readable. Where it is an NN-slug folder of
        a learner's problems/ folder, that problems/ folder is readable as a
        whole, so that a solution can use the learner's earlier ones
        (`grader.reuse.solution_of`); never one of the grader's own.
        """
        path = Path(submission).resolve()
        folder = path if path.is_dir() else path.parent
        private = [Path(p) for p in grader_private_paths()]
        if any(_inside(p, folder) for p in private):
            folder = path
        elif (problems := learner_problems_folder(folder, private)) is not None:
            folder = problems
        scratch = os.fspath(scratch)
        return cls(readable=[*readable_paths_for_python(), str(folder)], scratch=scratch,
                   environment=clean_environment(scratch), **limits)


def worker_limits(memory_bytes: int | None, scratch_bytes: int | None = DEFAULT_SCRATCH_BYTES,
                  max_processes: int | None = Policy.max_processes,
                  isolation: Isolation | None = None,
                  cpu_seconds: int | None = Policy.cpu_seconds) -> TreeLimits:
    """The grader's side of one worker's tree-wide limits: its cgroups, made now
    (``close()`` them once the worker has ended), and what to tell the worker
    (``request()``, whose entries ``tree_options`` reads back in the worker)."""
    isolation = probe() if isolation is None else isolation
    limits = TreeLimits.create(memory_bytes, max_processes, cpu_seconds=cpu_seconds)
    if scratch_bytes is not None:
        limits.extra["scratch_bytes"] = int(scratch_bytes)
    if isolation.unprivileged_uid and isolation.launcher:
        limits.extra["unprivileged_uid"] = True
    return limits


def tree_options(request: Mapping[str, Any]) -> dict[str, Any]:
    """The Policy arguments a worker's request carries for its tree-wide limits."""
    options: dict[str, Any] = {}
    groups = request.get("cgroups")
    if isinstance(groups, dict) and all(isinstance(k, str) and isinstance(v, str)
                                        for k, v in groups.items()):
        options["cgroups"] = dict(groups)
    size = request.get("scratch_bytes")
    if type(size) is int and size > 0:
        options["scratch_bytes"] = size
    if request.get("unprivileged_uid") is True:
        options["unprivileged_uid"] = True
    return options


def learner_problems_folder(folder: Path, private: list[Path]) -> Path | None:
    """The parent of a learner's NN-slug folder, when it is a problems/ folder.

    It qualifies when it is named problems, or when every folder in it is an
    NN-slug folder (a roster learner's folder, the gradebook's staging), and it
    neither holds nor lies in any of the grader's private folders. A checkout
    as a whole is private, but the learner's problems/ in it is theirs.
    """
    from grader.reuse import PROBLEM_FOLDER

    parent = folder.parent
    if not PROBLEM_FOLDER.fullmatch(folder.name) or parent == folder:
        return None
    checkout = _checkout_root()
    for p in private:
        if _inside(p, parent) or (_inside(parent, p) and p != checkout):
            return None
    if parent.name != "problems":
        try:
            entries = [e for e in parent.iterdir() if not e.name.startswith(".")]
        except OSError:
            return None
        if any(e.is_dir() and not PROBLEM_FOLDER.fullmatch(e.name) for e in entries):
            return None
    return parent


def _checkout_root() -> Path | None:
    """The repository the grader runs from, when it is a checkout (not installed)."""
    try:
        from grader import paths
    except ImportError:
        return None
    return None if paths.INSTALLED else paths.ROOT.resolve()


def grader_private_paths() -> list[str]:
    """Folders a submission must never be able to read: the grader's checks,
    reference solutions, data, history and its own package."""
    try:
        from grader import paths
    except ImportError:  # the module used on its own
        return []
    package = Path(paths.__file__).resolve().parent
    private = [paths.SOLUTIONS, paths.DATA, paths.CHECKS, paths.STATE, paths.ROOT / ".git",
               package]
    # A checkout (editable install) as a whole is private too; an installed package's
    # parent is site-packages, which must stay readable.
    if (paths.ROOT / "pyproject.toml").exists() or (paths.ROOT / ".git").exists():
        private.append(paths.ROOT)
    return [str(Path(p).resolve()) for p in private]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _without(candidate: Path, denied: list[Path]) -> list[Path]:
    """``candidate``, or where it contains a denied folder, its parts around it.

    A Landlock rule covers a whole hierarchy, so an ancestor of a private folder
    cannot be granted; its other entries can, one by one.
    """
    inner = [d for d in denied if d != candidate and candidate in d.parents]
    if candidate in denied:
        return []
    if not inner:
        return [candidate]
    kept: list[Path] = []
    try:
        entries = sorted(candidate.iterdir())
    except OSError:
        return []
    for entry in entries:
        if any(_inside(d, entry) for d in inner):
            if entry.is_dir() and not entry.is_symlink():
                kept += _without(entry, denied)
        else:
            kept.append(entry)
    return kept


def readable_paths_for_python(deny: Iterable[str | os.PathLike[str]] | None = None) -> list[str]:
    """What this interpreter needs to read to run torch, minus ``deny``.

    Found by trial: under Landlock with only these paths, a fresh interpreter
    imports torch and runs a small model. ``deny`` defaults to the grader's
    private folders; a path inside a denied folder that Python needs (a virtual
    environment in the checkout) stays readable, but no rule ever covers a
    denied folder itself.
    """
    denied = [Path(p).resolve() for p in (grader_private_paths() if deny is None else deny)]
    candidates: list[str] = [
        sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
    ]
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            candidates.append(sysconfig.get_paths()[key])
    with contextlib.suppress(Exception):
        import site

        candidates += site.getsitepackages()
    # Absolute sys.path entries (PYTHONPATH, .pth additions); '' and the current
    # folder are left out, since they are wherever the grader happened to start.
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the folder was removed under us
        cwd = ""
    candidates += [p for p in sys.path if os.path.isabs(p) and os.path.realpath(p) != cwd]
    # Shared libraries and the loader's cache; the devices Python and torch open.
    candidates += [
        "/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64",
        "/usr/local/lib", "/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo",
        "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
        # torch's CPU detection reads these when it is first imported (it prints
        # an error without /proc/cpuinfo); on ARM it reads /sys as well.
        "/proc/cpuinfo", "/sys/devices/system/cpu",
    ]
    seen: set[Path] = set()
    result: list[str] = []
    for candidate in candidates:
        if not candidate:
            continue
        path = Path(os.path.realpath(candidate))
        if not path.exists():
            continue
        for kept in _without(path, denied):
            if kept not in seen:
                seen.add(kept)
                result.append(str(kept))
    # Drop paths already covered by another one, so the ruleset stays small.
    result.sort(key=len)
    minimal: list[str] = []
    for p in result:
        if not any(_inside(Path(p), Path(q)) for q in minimal):
            minimal.append(p)
    return minimal


# --- applying it ----------------------------------------------------------------------
def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
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
            with open(f"/proc/{entry}/status") as status:
                fields = dict(line.split(":", 1) for line in status if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
        except (OSError, KeyError, ValueError, IndexError):
            continue
    return count


def _set_limit(which: int, soft: int, hard: int | None = None) -> None:
    assert resource is not None
    _current_soft, current_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        # An unprivileged process cannot raise its hard limit; stay below it.
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(which, (soft, hard))


def memory_limits(budget: int) -> tuple[int, int]:
    """The RLIMIT_DATA and RLIMIT_AS values that give ``budget`` bytes of headroom.

    RLIMIT_DATA counts private writable memory, which is what tensors, lists and
    bytearrays use, so it carries the budget. RLIMIT_AS also counts shared
    mappings (``mmap.mmap(-1, n)``), but torch, glibc and thread stacks reserve
    address space they never touch, so it is set looser, as a backstop.
    """
    data = (_status_kb("VmData") or 0) + budget
    space = (_status_kb("VmSize") or 0) + 2 * budget + 256 * MB
    return data, space


def _apply_rlimits(policy: Policy, own_user_namespace: bool = False) -> list[str]:
    assert resource is not None
    layers = ["rlimits"]
    _set_limit(resource.RLIMIT_CORE, 0)  # no core files in scratch or anywhere
    # Only Linux enforces RLIMIT_DATA on mmap'd memory, and only there can the
    # current footprint be read to place the limit above it.
    if policy.memory_bytes is not None and _status_kb("VmData") is not None:
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
            running = (_status_kb("Threads") or 1024) // 1024  # a count, not kB
            _set_limit(resource.RLIMIT_NPROC, running + policy.max_processes + backstop)
        else:
            running = _tasks_of_user(os.getuid())
            # The launcher itself is in the user namespace but outside our /proc.
            _set_limit(resource.RLIMIT_NPROC, running + 1 + policy.max_processes + backstop)
    return layers


def _drop_capabilities() -> bool:
    """Drop every capability, for good; True if there were any to drop.

    In a user namespace mapped to root, or for a grader started as root without
    namespaces, the child would otherwise hold capabilities.
    """
    libc = _libc()
    if libc is None:
        return False
    try:
        with open("/proc/self/status") as status:
            caps = {k: int(v, 16) for k, v in
                    (line.split(":", 1) for line in status if line.startswith("Cap"))}
    except (OSError, ValueError):
        return False
    # The bounding set alone gives nothing without execve, which Landlock denies.
    if not any(caps.get(k, 0) for k in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
        return False
    with contextlib.suppress(OSError):
        _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL)
    try:
        with open("/proc/sys/kernel/cap_last_cap") as last:
            last_cap = int(last.read())
    except (OSError, ValueError):
        last_cap = 63
    for cap in range(last_cap + 1):
        # Needs CAP_SETPCAP; without it the bounding set cannot matter anyway, as
        # execve is forbidden by Landlock and no_new_privs.
        with contextlib.suppress(OSError):
            _prctl(_PR_CAPBSET_DROP, cap)
    header = struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two zeroed {effective, permitted, inheritable} words
    _check(libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(data)), "capset")
    return True


def _landlock(policy: Policy, abi: int) -> None:
    libc = _libc()
    assert libc is not None
    abi = min(abi, _KNOWN_ABI)
    fs = _fs_rights(abi)
    read = _FS_READ_FILE | _FS_READ_DIR | (_FS_EXECUTE if policy.allow_exec else 0)
    attr = _RulesetAttr(fs, _net_rights(abi), _scopes(abi))
    # Older kernels know a shorter struct; give each the size it expects.
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    ruleset = _check(libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr),
                                  ctypes.c_size_t(size), ctypes.c_uint32(0)),
                     "landlock_create_ruleset")
    try:
        rules: list[tuple[str, int]] = [(p, read) for p in policy.readable]
        # Writing to /dev/null is what "discard" means; Python opens it that way.
        rules.append(("/dev/null", _FS_READ_FILE | _FS_WRITE_FILE | _FS_TRUNCATE))
        if policy.scratch is not None:
            rules.append((policy.scratch, fs & ~(0 if policy.allow_exec else _FS_EXECUTE)))
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path that does not exist needs no rule
            try:
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    access &= _FS_FILE_RIGHTS
                beneath = _PathBeneathAttr(access & fs, fd)
                _check(libc.syscall(_SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset),
                                    ctypes.c_int(_LANDLOCK_RULE_PATH_BENEATH),
                                    ctypes.byref(beneath), ctypes.c_uint32(0)),
                       f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        _check(libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset),
                            ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _seccomp_no_sockets() -> None:
    """Refuse socket(2), io_uring_setup(2), file metadata changes, memfd_create(2)
    and changes of user or group id with EPERM.

    Landlock (before ABI 9) does not cover connecting to a Unix socket by path,
    and the network namespace does not either, since such sockets live in the
    file system. Sockets the process already holds keep working. Nor does
    Landlock cover chmod, chown, utime or xattrs (see _SECCOMP_METADATA), and
    no limit covers what _SECCOMP_MORE refuses.
    """
    arch, nr_socket, nr_io_uring = _SECCOMP_ARCHES[_machine()]
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
        *[ins for nr in (*_SECCOMP_METADATA[_machine()], *_SECCOMP_MORE[_machine()])
          for ins in ((jeq_k, 0, 1, nr), (ret_k, 0, 0, deny))],
        (ret_k, 0, 0, allow),
    ]
    if _machine() != "x86_64":
        # Only x86_64 has the x32 bit to worry about.
        program = program[:4] + program[6:]
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    fprog = _SockFprog(len(program), filters)
    _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


def _namespace_layers() -> list[str]:
    """The namespaces this process actually sits in (set up by the launcher)."""
    layers = []
    try:
        with open("/proc/self/uid_map") as uid_map:
            if uid_map.read().split() != ["0", "0", "4294967295"]:
                layers.append("user-namespace")
    except OSError:
        pass
    with contextlib.suppress(OSError):
        if [name for _i, name in socket.if_nameindex()] in ([], ["lo"]):
            layers.append("network-namespace")
    with contextlib.suppress(OSError):
        # The initial PID namespace has a fixed inode number (PROC_PID_INIT_INO).
        if os.stat("/proc/self/ns/pid").st_ino != 0xEFFFFFFC:
            layers.append("pid-namespace")
    return layers


def _give_up_real_root() -> bool:
    """Outside any user namespace, a root process takes an unprivileged real uid
    (its effective uid stays root until the capabilities go); True if it is not
    root, or no longer."""
    try:
        with open("/proc/self/uid_map") as uid_map:
            if uid_map.read().split() != ["0", "0", "4294967295"]:
                return False  # in a namespace: the launcher decided (Policy.unprivileged_uid)
    except OSError:
        return False
    if os.getuid() == 0:
        os.setresuid(UNPRIVILEGED_UID, -1, -1)
    return os.getuid() != 0


def isolate(policy: Policy, isolation: Isolation | None = None) -> list[str]:
    """Apply every available layer to the calling process; returns their names.

    Call it right after fork, while the process is single-threaded (Landlock and
    seccomp bind the calling thread and its future children only), before any
    learner code is loaded or imported. What this process imports later must be
    readable under the policy. It also moves into the scratch folder and, when
    the policy has one, replaces the environment. A layer the machine lacks is skipped; a layer
    that is there but fails raises OSError, since running unprotected would be
    worse than not running.
    """
    linux = sys.platform.startswith("linux")
    abi = isolation.landlock_abi if isolation is not None else landlock_abi()
    # Decided now: /proc may be out of reach once Landlock is on.
    seccomp = policy.forbid_sockets and (
        isolation.seccomp if isolation is not None else linux and _probe_seccomp())
    layers: list[str] = _namespace_layers() if linux else []
    if linux and policy.cgroups:
        # First: every page and process from here on is counted in the groups.
        layers += cgroups.join(policy.cgroups)

    if hasattr(os, "setsid"):
        with contextlib.suppress(OSError):
            os.setsid()  # EPERM: already a session leader, which is what we want
        layers.append("new-session")

    # Outside any namespace, a root process first takes another real uid, for the
    # user namespace made below to count that uid's tasks.
    was_root = linux and "user-namespace" not in layers and os.getuid() == 0
    real_uid_dropped = linux and not policy.unprivileged_uid and _give_up_real_root()
    own_user_namespace = False
    if linux and policy.scratch is not None and policy.scratch_bytes is not None \
            and scratch.available():
        try:
            scratch.mount_scratch(policy.scratch, policy.scratch_bytes)
            layers.append("scratch-tmpfs")
        except OSError as exc:
            # A system that makes user namespaces but gives no rights in them (an
            # AppArmor policy, say) lacks this layer; "missing:" then says so.
            if exc.errno not in (errno.EPERM, errno.EACCES, errno.EINVAL):
                raise
    if linux and scratch.available():
        # A user namespace of its own, with no ids mapped: the kernel counts its
        # tasks apart from the rest of the uid's (RLIMIT_NPROC is then this
        # sandbox's), and the submission can make no namespaces (nor mounts).
        try:
            scratch.unmap_ids()
            own_user_namespace = True
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EINVAL, errno.ENOSPC, errno.EUSERS):
                raise

    # Only where the submission cannot take its real uid back: no ids are mapped
    # here, or seccomp refuses the set*id calls, or it is not root at all.
    if linux and policy.unprivileged_uid:
        unprivileged = own_user_namespace or seccomp
    else:
        unprivileged = real_uid_dropped and (own_user_namespace or seccomp or not was_root)
    if unprivileged:
        layers.append("unprivileged-uid")

    if policy.scratch is not None:
        # The inherited folder is wherever the grader started, often the checkout,
        # which will be unreadable; relative paths should land in scratch.
        os.chdir(policy.scratch)

    if policy.environment is not None:
        os.environ.clear()
        os.environ.update(policy.environment)
        layers.append("clean-env")

    if resource is not None:
        layers += _apply_rlimits(policy, own_user_namespace)

    if linux and _libc() is not None:
        parent = os.getppid()
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(1)  # the parent ended before the signal was armed
        layers.append("parent-death-signal")
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)
        layers.append("no-new-privs")
        if _drop_capabilities():
            layers.append("capabilities-dropped")
        if abi >= 1:
            _landlock(policy, abi)
            layers.append(f"landlock-abi{abi}")
        if seccomp:
            try:
                _seccomp_no_sockets()
                # One name for the rest: the grader keeps the first 20 names.
                layers += ["seccomp-no-sockets", "seccomp-no-memfd-ipc-setuid"]
            except OSError as exc:
                # EINVAL: a kernel built with seccomp but without filters. Anything
                # else means the layer is there and failed.
                if exc.errno != errno.EINVAL:
                    raise
    if linux and (missing := _missing_tree_layers(layers)):
        layers.append("missing:" + ",".join(missing))
    return layers


def _missing_tree_layers(layers: list[str]) -> list[str]:
    """The layers over the worker's whole tree that did not run here, by name."""
    wanted = ("memory-cgroup", "pids-cgroup", "cpu-cgroup", "scratch-tmpfs", "unprivileged-uid")
    return [name for name in wanted if not _has_layer(layers, name)]


# The tree's CPU time is counted by cgroup v1's cpuacct controller, or v2's cpu.stat.
_LAYER_NAMES = {"cpu-cgroup": ("cpu-cgroup", "cpuacct-cgroup")}


def _has_layer(layers: Iterable[str], name: str) -> bool:
    """Whether one of `layers` (e.g. "cpuacct-cgroup-v1") stands for the layer `name`."""
    prefixes = _LAYER_NAMES.get(name, (name,))
    return any(layer.startswith(prefixes) for layer in layers)


# --- reading the outcome --------------------------------------------------------------
def out_of_memory(exc: BaseException) -> bool:
    """Whether an exception is how a reached memory limit shows itself."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "Cannot allocate memory" in text)


# The calls the seccomp filter refuses, by the names a call site gives them, and the
# rule each group stands for. The filter answers EPERM, which says nothing about why:
# without the rule named, a learner would look for the fault in their own code.
_SECCOMP_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("memfd_create", "memfd_secret", "shmget", "msgget", "semget"),
     "no memfd files and no System V shared memory, message queues or semaphores, "
     "whose memory no limit counts"),
    (("setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
      "initgroups", "setfsuid", "setfsgid"),
     "no change of user or group id"),
    (("chmod", "fchmod", "lchmod", "chown", "fchown", "lchown", "utime", "utimes",
      "setxattr", "removexattr"),
     "no change to a file's mode, owner, times or extended attributes"),
    (("socket", "socketpair", "io_uring_setup"),
     "no new sockets (the sandbox has no network)"),
)
_SECCOMP_CALL = re.compile(r"\b(" + "|".join(name for names, _ in _SECCOMP_RULES
                                              for name in names) + r")\b")


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
    rule = next(rule for names, rule in _SECCOMP_RULES if name in names)
    return f"the sandbox refused {name}(): its seccomp filter allows {rule}"


def limit_message(policy: Policy, exc: BaseException | None = None,
                  signum: int | None = None) -> str | None:
    """A sentence naming the limit (or the sandbox's rule) an exception or a fatal
    signal stands for."""
    if exc is not None:
        if policy.forbid_sockets and (refused := refused_call(exc)):
            return refused
        if out_of_memory(exc) and policy.memory_bytes is not None:
            return f"the memory limit ({policy.memory_bytes // MB} MB) was reached"
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            size = policy.max_file_bytes or 0
            return f"the file size limit ({size // MB} MB) was reached"
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC and policy.scratch_bytes:
            return (f"the scratch folder's size limit ({policy.scratch_bytes // MB} MB) "
                    "was reached")
        if isinstance(exc, BlockingIOError) and policy.max_processes is not None:
            return f"the process limit ({policy.max_processes}) was reached"
        if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
            # A thread needs both a task slot and memory for its stack.
            return "a thread could not start: the process or memory limit was reached"
    if signum is not None:
        if signum == getattr(signal, "SIGXCPU", None) and policy.cpu_seconds is not None:
            return f"the CPU time limit ({policy.cpu_seconds} s) was reached"
        if signum == getattr(signal, "SIGXFSZ", None):
            size = policy.max_file_bytes or 0
            return f"the file size limit ({size // MB} MB) was reached"
    return None
