"""What this machine offers the sandbox, found in the grader: which layers work
(`probe()`), the launcher that starts the fork server in namespaces of its own
(`launcher_prefix()`), and each worker's limits over its whole tree (`worker_limits()`,
read back in the worker by `tree_options()`). The layers themselves are applied in the
worker by `grader.sandbox.worker.isolation.isolate`.

It sits on the worker's side although `probe()` runs in the grader: it is the
catalogue of the worker's layers, read on both sides, and the worker never imports
the grader's side of the sandbox.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from grader.sandbox.wire.limits import DEFAULTS
from grader.sandbox.worker.layers import cgroups, landlock, namespaces, rlimits, seccomp, syscalls
from grader.sandbox.worker.layers.cgroups import TreeLimits
from grader.sandbox.worker.layers.policy import Policy


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
        return missing_tree_layers(self.summary())


@functools.cache
def probe() -> Isolation:
    """Find the layers this machine offers; cached, never raises.

    Call it in the grader, not in a sandboxed child: it starts a throwaway
    process to see whether namespaces can be created.
    """
    try:
        linux = sys.platform.startswith("linux")
        prctl_ok = False
        if linux and syscalls.libc() is not None:
            with contextlib.suppress(OSError):
                syscalls.prctl(syscalls.PR_GET_NO_NEW_PRIVS)  # harmless, and proves prctl answers
                prctl_ok = True
        launcher, unprivileged = _launcher() if linux else ((), False)
        return Isolation(
            platform=sys.platform,
            landlock_abi=landlock.abi() if linux else 0,
            launcher=launcher,
            rlimits=rlimits.available(),
            prctl=prctl_ok,
            seccomp=linux and prctl_ok and seccomp.available(),
            cgroups=tuple(h.layer(c) for h in cgroups.hierarchies() for c in h.controllers)
            if linux else (),
            # Without a launcher, isolate() itself gives a root worker another real uid.
            unprivileged_uid=unprivileged or (linux and not launcher),
        )
    except Exception:  # a probe must not take the grader down
        return Isolation(platform=sys.platform)


@functools.cache
def _launcher() -> tuple[tuple[str, ...], bool]:
    """`namespaces.probe_launcher()`, found once: `launcher_prefix` needs only this part
    of `probe`, and asks for it before the fork server starts."""
    return namespaces.probe_launcher()


def launcher_prefix(isolation: Isolation | None = None) -> list[str]:
    """The argv prefix that starts a command in its own namespaces, or [] if none.

    Inside: a user namespace in which the command has no capabilities, a network
    namespace with only a loopback device that is down, a PID namespace in which
    the command is PID 1 (when it ends, the kernel kills every process left in
    the namespace, however they detached), and its own /proc. --kill-child ties
    the command to the launcher: killing the launcher kills the whole tree.

    As PID 1 the command receives, from outside, only SIGKILL and the signals it
    has handlers for; end it by signalling the launcher, or by closing its channel.

    Without `isolation`, only the launcher is probed, not the rest of `probe` (the
    cgroups, 30 ms): the fork server starts that much sooner, and the rest is probed
    when the first worker's limits are made, while the server imports torch.
    """
    if isolation is None:
        try:
            return list(_launcher()[0]) if sys.platform.startswith("linux") else []
        except Exception:  # noqa: BLE001 - as probe() finds it: no launcher
            return []
    return list(isolation.launcher)


def worker_limits(memory_bytes: int | None, scratch_bytes: int | None = DEFAULTS.scratch_bytes,
                  cpu_seconds: int | None = Policy.cpu_seconds) -> TreeLimits:
    """The grader's side of one worker's tree-wide limits: its cgroups, made now
    (``close()`` them once the worker has ended), and what to tell the worker
    (``request()``, whose entries ``tree_options`` reads back in the worker)."""
    isolation = probe()
    limits = TreeLimits.create(memory_bytes, Policy.max_processes, cpu_seconds=cpu_seconds)
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


def missing_tree_layers(layers: list[str]) -> list[str]:
    """The layers over the worker's whole tree that did not run here, by name."""
    wanted = ("memory-cgroup", "pids-cgroup", "cpu-cgroup", "scratch-tmpfs", "unprivileged-uid")
    return [name for name in wanted if not has_layer(layers, name)]


# The tree's CPU time is counted by cgroup v1's cpuacct controller, or v2's cpu.stat.
LAYER_NAMES = {"cpu-cgroup": ("cpu-cgroup", "cpuacct-cgroup")}


def has_layer(layers: Iterable[str], name: str) -> bool:
    """Whether one of `layers` (e.g. "cpuacct-cgroup-v1") stands for the layer `name`."""
    prefixes = LAYER_NAMES.get(name, (name,))
    return any(layer.startswith(prefixes) for layer in layers)
