"""Isolation primitives for the process that runs a learner's submission.

Three steps, each made of layers that are used where the machine has them; the first
two are the grader's (`grader.sandbox.worker.machine`), the third is this module:

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

Limits on the worker's whole tree (`grader.sandbox.worker.layers`), where the machine
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

``limit_message()`` (`grader.sandbox.worker.describe`) turns either an exception or a
fatal signal into a sentence.

Each layer is a module of `grader.sandbox.worker.layers`; `isolate` applies them in the
order of ``LAYERS``. The policy itself is `grader.sandbox.worker.layers.policy`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

from grader.sandbox.worker.layers import (
    capabilities,
    cgroups,
    landlock,
    namespaces,
    rlimits,
    scratch,
    seccomp,
    syscalls,
)
from grader.sandbox.worker.layers.policy import Policy
from grader.sandbox.worker.machine import Isolation, missing_tree_layers


# --- applying it ----------------------------------------------------------------------
@dataclass
class _Child:
    """The process being isolated: its policy, and what the layers applied so far
    found out, for the ones after them."""

    policy: Policy
    linux: bool
    abi: int
    seccomp: bool
    layers: list[str]
    was_root: bool = False
    real_uid_dropped: bool = False
    own_user_namespace: bool = False

    @property
    def kernel(self) -> bool:
        """Whether the kernel can be called directly (prctl, Landlock, seccomp)."""
        return self.linux and syscalls.libc() is not None


def _joined_cgroups(child: _Child) -> list[str]:
    # First: every page and process from here on is counted in the groups.
    if child.linux and child.policy.cgroups:
        return cgroups.join(child.policy.cgroups)
    return []


def _new_session(child: _Child) -> list[str]:
    if not hasattr(os, "setsid"):
        return []
    with contextlib.suppress(OSError):
        os.setsid()  # EPERM: already a session leader, which is what we want
    return ["new-session"]


def _real_uid(child: _Child) -> list[str]:
    # Outside any namespace, a root process first takes another real uid, for the
    # user namespace made below to count that uid's tasks.
    linux = child.linux
    child.was_root = linux and "user-namespace" not in child.layers and os.getuid() == 0
    child.real_uid_dropped = (linux and not child.policy.unprivileged_uid
                              and namespaces.give_up_real_root())
    return []


def _scratch_tmpfs(child: _Child) -> list[str]:
    policy = child.policy
    if not (child.linux and policy.scratch is not None and policy.scratch_bytes is not None
            and scratch.available()):
        return []
    try:
        scratch.mount_scratch(policy.scratch, policy.scratch_bytes)
        return ["scratch-tmpfs"]
    except OSError as exc:
        # A system that makes user namespaces but gives no rights in them (an
        # AppArmor policy, say) lacks this layer; "missing:" then says so.
        if exc.errno not in (errno.EPERM, errno.EACCES, errno.EINVAL):
            raise
    return []


def _own_user_namespace(child: _Child) -> list[str]:
    # A user namespace of its own, with no ids mapped: the kernel counts its
    # tasks apart from the rest of the uid's (RLIMIT_NPROC is then this
    # sandbox's), and the submission can make no namespaces (nor mounts).
    if child.linux and scratch.available():
        try:
            scratch.unmap_ids()
            child.own_user_namespace = True
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EINVAL, errno.ENOSPC, errno.EUSERS):
                raise
    return []


def _unprivileged_uid(child: _Child) -> list[str]:
    # Only where the submission cannot take its real uid back: no ids are mapped
    # here, or seccomp refuses the set*id calls, or it is not root at all.
    own = child.own_user_namespace
    if child.linux and child.policy.unprivileged_uid:
        unprivileged = own or child.seccomp
    else:
        unprivileged = child.real_uid_dropped and (own or child.seccomp or not child.was_root)
    return ["unprivileged-uid"] if unprivileged else []


def _into_scratch(child: _Child) -> list[str]:
    if child.policy.scratch is not None:
        # The inherited folder is wherever the grader started, often the checkout,
        # which will be unreadable; relative paths should land in scratch.
        os.chdir(child.policy.scratch)
    return []


def _clean_environment(child: _Child) -> list[str]:
    if child.policy.environment is None:
        return []
    os.environ.clear()
    os.environ.update(child.policy.environment)
    return ["clean-env"]


def _rlimits(child: _Child) -> list[str]:
    if not rlimits.available():
        return []
    return rlimits.apply(child.policy, child.own_user_namespace)


def _parent_death_signal(child: _Child) -> list[str]:
    if not child.kernel:
        return []
    parent = os.getppid()
    syscalls.prctl(syscalls.PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)  # the parent ended before the signal was armed
    return ["parent-death-signal"]


def _no_new_privs(child: _Child) -> list[str]:
    if not child.kernel:
        return []
    syscalls.prctl(syscalls.PR_SET_NO_NEW_PRIVS, 1)
    return ["no-new-privs"]


def _capabilities(child: _Child) -> list[str]:
    return ["capabilities-dropped"] if child.kernel and capabilities.drop() else []


def _landlock(child: _Child) -> list[str]:
    if not (child.kernel and child.abi >= 1):
        return []
    landlock.apply(child.policy, child.abi)
    return [f"landlock-abi{child.abi}"]


def _seccomp(child: _Child) -> list[str]:
    if not (child.kernel and child.seccomp):
        return []
    try:
        seccomp.apply()
    except OSError as exc:
        # EINVAL: a kernel built with seccomp but without filters. Anything
        # else means the layer is there and failed.
        if exc.errno != errno.EINVAL:
            raise
        return []
    # One name for the rest: the grader keeps the first 20 names.
    return ["seccomp-no-sockets", "seccomp-no-memfd-ipc-setuid"]


def _missing(child: _Child) -> list[str]:
    if child.linux and (missing := missing_tree_layers(child.layers)):
        return ["missing:" + ",".join(missing)]
    return []


# The layers in the order they are applied: the cgroups first, so that everything
# after is counted; the uid and namespaces before the limits that count tasks in
# them; the kernel's filters last, since each forbids something the ones before need.
LAYERS: tuple[Callable[[_Child], list[str]], ...] = (
    _joined_cgroups, _new_session, _real_uid, _scratch_tmpfs, _own_user_namespace,
    _unprivileged_uid, _into_scratch, _clean_environment, _rlimits, _parent_death_signal,
    _no_new_privs, _capabilities, _landlock, _seccomp, _missing,
)


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
    abi = isolation.landlock_abi if isolation is not None else landlock.abi()
    # Decided now: /proc may be out of reach once Landlock is on.
    filters = policy.forbid_sockets and (
        isolation.seccomp if isolation is not None else linux and seccomp.available())
    child = _Child(policy, linux, abi, filters, namespaces.entered() if linux else [])
    for layer in LAYERS:
        child.layers += layer(child)
    return child.layers
