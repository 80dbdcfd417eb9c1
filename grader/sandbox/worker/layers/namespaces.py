"""Namespaces: the launcher that starts the fork server in new user, network,
PID and mount namespaces, the real uid it gives a grader run as root, and what
a worker finds itself in."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading

from grader.sandbox.worker.layers import syscalls

PROBE_TIMEOUT = 20.0  # seconds a launcher's trial run may take
# The real uid of a fork server started by a grader that runs as root ("nobody").
UNPRIVILEGED_UID = 65534

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
    """The exit code of `argv`, killed after PROBE_TIMEOUT; None if it cannot start.

    A wait with a timeout polls, sleeping ever longer, and outlasted this run of a
    hundredth of a second by half, on every grade: a timer kills a launcher that
    hangs instead, and the wait itself blocks."""
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    timer = threading.Timer(PROBE_TIMEOUT, process.kill)
    timer.start()
    try:
        return process.wait()
    finally:
        timer.cancel()
        timer.join()  # no thread outlives the probe: the grader may fork after it


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


def probe_launcher() -> tuple[tuple[str, ...], bool]:
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


def die_with_launcher() -> None:
    """In the command a launcher started: be killed when the launcher dies.

    unshare --kill-child arms a parent-death signal for its child, but an exec
    whose real uid differs from its effective one (``_unprivileged_prefix``)
    clears it, so the command arms it again itself, first thing. Only as PID 1
    of a namespace, whose parent is the single-threaded launcher: the signal
    follows the parent *thread* that started a process.
    """
    if os.getpid() == 1 and syscalls.libc() is not None:
        with contextlib.suppress(OSError):
            syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)


def entered() -> list[str]:
    """The namespaces this process actually sits in (set up by the launcher)."""
    layers = []
    if syscalls.uid_map() not in (None, syscalls.NO_USER_NAMESPACE):
        layers.append("user-namespace")
    with contextlib.suppress(OSError):
        if [name for _i, name in socket.if_nameindex()] in ([], ["lo"]):
            layers.append("network-namespace")
    with contextlib.suppress(OSError):
        # The initial PID namespace has a fixed inode number (PROC_PID_INIT_INO).
        if os.stat("/proc/self/ns/pid").st_ino != 0xEFFFFFFC:
            layers.append("pid-namespace")
    return layers


def give_up_real_root() -> bool:
    """Outside any user namespace, a root process takes an unprivileged real uid
    (its effective uid stays root until the capabilities go); True if it is not
    root, or no longer."""
    if syscalls.uid_map() != syscalls.NO_USER_NAMESPACE:
        return False  # in a namespace: the launcher decided (Policy.unprivileged_uid)
    if os.getuid() == 0:
        os.setresuid(UNPRIVILEGED_UID, -1, -1)
    return os.getuid() != 0
