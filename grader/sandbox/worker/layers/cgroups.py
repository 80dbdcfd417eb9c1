"""A cgroup per worker: memory, a process count and CPU time over the worker's whole tree,
and its share of the CPU.

RLIMIT_DATA counts one process's private memory, and RLIMIT_NPROC counts a
user's tasks (and never root's). A cgroup counts the worker and every process
it starts together, and its memory counts the pages of memfd and tmpfs files
they fill too (shared memory is charged to the cgroup that touched it).
RLIMIT_CPU, too, bounds each process alone (a child starts at zero); a group
adds up the CPU time of all of them (cgroup v1 `cpuacct`, or v2's `cpu.stat`,
there in every group), and a thread of the grader's ends the whole tree once
that sum passes the worker's budget.

A worker's tree also shares the CPU as one, with the same weight as every other
worker (cgroup v1 `cpu`, whose groups each get the default cpu.shares): a
learner's code that starts a dozen busy processes, each in a session of its own
(which the kernel's autogroup would weigh apart), slows only itself; without it,
a gradebook grading two learners at once gave the other one a spent time budget.

The grader makes a group below its own for each worker in every hierarchy it
may write (cgroup v1 `memory`, `pids`, `cpuacct` and `cpu`, usually as root; or
cgroup v2 where a subtree with memory and pids is delegated to it), the worker joins it
before any learner code runs (`join`), and the grader reads which limit was
reached (`TreeLimits.reached`), ends whatever is left in it and removes it
(`TreeLimits.close`).

Pages the worker shares with the fork server it was forked from stay charged
to the server's group, so, like RLIMIT_DATA, the limit is headroom above what
the worker held when it started; `ALLOWANCE` covers the pages the worker
itself copies and fills to talk to the grader.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import re
import signal
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from grader.locale import tr

MB = 1 << 20
# Headroom for the worker's own pages beyond the learner's budget: copies of the
# fork server's pages it writes to, the model it builds, frames it decodes.
ALLOWANCE = 128 * MB
# Tasks of the worker itself when it joins (it is single-threaded then).
OWN_TASKS = 1
# How long `close` waits for a killed group to empty before giving up on it.
EMPTY_WAIT = 5.0
# How often the tree's CPU time is read: the tree may overrun its budget by this
# much per core.
CPU_POLL = 0.2

_numbers = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """A folder this process may make groups in, and the controllers they get."""

    version: int
    controllers: tuple[str, ...]
    base: str

    def layer(self, controller: str) -> str:
        # v1's cpu controller only weighs the group's share of the CPU; its time is
        # counted by cpuacct ("cpu-cgroup" in a report means that count).
        name = "cpu-share" if (self.version, controller) == (1, "cpu") else controller
        return f"{name}-cgroup-v{self.version}"


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, type, super options) of each cgroup file system mounted."""
    found = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
            lines = info.read().splitlines()
    except OSError:
        return []
    for line in lines:
        before, _sep, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        root, point = (f.replace("\\040", " ") for f in fields[3:5])
        found.append((root, point, tail[0], set(tail[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """This process's group in each hierarchy: by controller, and "" for cgroup v2."""
    groups: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="surrogateescape") as own:
            lines = own.read().splitlines()
    except OSError:
        return {}
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            groups[controller] = parts[2]
    return groups


def _folder(point: str, root: str, group: str) -> str | None:
    if not (group == root or group.startswith(root.rstrip("/") + "/")):
        return None  # our group is not visible under this mount
    return os.path.join(point, os.path.relpath(group, root))


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _can_make_groups(base: str) -> bool:
    """Whether a group can be made (and removed) here: tried, not guessed."""
    trial = os.path.join(base, f"gpt-kata-probe-{os.getpid()}-{next(_numbers)}")
    try:
        os.mkdir(trial)
    except OSError:
        return False
    with contextlib.suppress(OSError):
        os.rmdir(trial)
    return True


def _v2_hierarchy(point: str, root: str, groups: Mapping[str, str]) -> Hierarchy | None:
    group = groups.get("")
    base = _folder(point, root, group) if group is not None else None
    if base is None:
        return None
    try:
        enabled = set(_read(os.path.join(base, "cgroup.subtree_control")).split())
    except OSError:
        return None
    # Only a subtree delegated with both controllers already enabled for its
    # children: turning them on here would mean moving this process out first.
    if not {"memory", "pids"} <= enabled or not _can_make_groups(base):
        return None
    # cpu.stat's usage is kept in every v2 group, with the cpu controller or without.
    return Hierarchy(2, ("memory", "pids", "cpu"), base)


@functools.cache
def hierarchies() -> tuple[Hierarchy, ...]:
    """Where this process can give workers groups of their own; cached, never raises.

    Groups that a grader killed from outside left behind are removed on the way.
    """
    try:
        mounts, groups = _mounts(), _own_groups()
        result: list[Hierarchy] = []
        for root, point, kind, _options in mounts:
            if kind == "cgroup2" and (found := _v2_hierarchy(point, root, groups)):
                result = [found]
                break
        for controller in ("memory", "pids", "cpuacct", "cpu") if not result else ():
            for root, point, kind, options in mounts:
                if kind != "cgroup" or controller not in options or controller not in groups:
                    continue
                base = _folder(point, root, groups[controller])
                if base is not None and _can_make_groups(base):
                    # Controllers mounted together (cpu,cpuacct, as systemd mounts
                    # them) share one group per worker.
                    shared = next((h for h in result if h.base == base), None)
                    if shared is not None:
                        result[result.index(shared)] = Hierarchy(
                            1, (*shared.controllers, controller), base)
                    else:
                        result.append(Hierarchy(1, (controller,), base))
                    break
        for hierarchy in result:
            _remove_stale(hierarchy.base)
        return tuple(result)
    except Exception:  # a probe must not take the grader down
        return ()


_OURS = re.compile(r"gpt-kata-(\d+)-\d+")


def _remove_stale(base: str) -> None:
    """Remove the groups of graders that are gone (killed before they could)."""
    try:
        names = os.listdir(base)
    except OSError:  # gone, or never made
        return
    for name in names:
        match = _OURS.fullmatch(name)
        if match is not None and not _process_exists(int(match.group(1))):
            _remove(os.path.join(base, name))


def _process_exists(pid: int) -> bool:
    """Whether a process `pid` runs, as psutil.pid_exists tells on Linux (a thread's id
    is no process), without importing psutil (40 ms of every grade's start)."""
    if pid <= 0:
        return False  # no grader's (kill() would signal a whole group)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # someone else's (EPERM): it exists
    try:  # a thread of another process answers kill() too; its Tgid is not its id
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1]) == pid
    except (OSError, ValueError, IndexError):
        pass
    return True


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        name, _sep, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


@dataclass
class _Group:
    hierarchy: Hierarchy
    path: str


@dataclass
class TreeLimits:
    """One worker's groups: made by `create`, joined by the worker, ended by `close`."""

    memory_bytes: int | None
    max_processes: int | None
    # CPU seconds of the whole tree: at most the worker's own RLIMIT_CPU, hard limit.
    cpu_seconds: int | None = None
    groups: list[_Group] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    # More for the worker's request, from the other tree-wide layers.
    extra: dict[str, object] = field(default_factory=dict)
    # What was reached but not yet asked for when the groups were removed.
    last: str | None = None
    # Set once the tree's CPU time passed `cpu_seconds` and the tree was ended.
    cpu_spent: int = 0
    closed: threading.Event = field(default_factory=threading.Event)

    @classmethod
    def create(cls, memory_bytes: int | None, max_processes: int | None,
               where: Iterable[Hierarchy] | None = None,
               cpu_seconds: int | None = None) -> TreeLimits:
        limits = cls(memory_bytes, max_processes, cpu_seconds)
        name = f"gpt-kata-{os.getpid()}-{next(_numbers)}"
        for hierarchy in hierarchies() if where is None else where:
            path = os.path.join(hierarchy.base, name)
            try:
                os.mkdir(path)
            except OSError:
                continue  # this layer is then missing, and the worker does not report it
            group = _Group(hierarchy, path)
            limits.groups.append(group)
            try:
                limits._configure(group)
            except OSError:
                limits.groups.remove(group)
                _remove(path)
        if cpu_seconds is not None and limits._cpu_group() is not None:
            threading.Thread(target=limits._watch_cpu, daemon=True,
                             name="gpt-kata-cpu-watch").start()
        return limits

    def _cpu_group(self) -> _Group | None:
        """The group that counts the tree's CPU time: v1's cpuacct, v2's any."""
        for group in self.groups:
            counts = "cpuacct" if group.hierarchy.version == 1 else "cpu"
            if counts in group.hierarchy.controllers:
                return group
        return None

    def cpu_used(self) -> float | None:
        """CPU seconds the tree has used since the worker joined its groups."""
        group = self._cpu_group()
        if group is None:
            return None
        try:
            if group.hierarchy.version == 1:
                return int(_read(os.path.join(group.path, "cpuacct.usage"))) / 1e9
            stat = _read(os.path.join(group.path, "cpu.stat"))
            return _counter(stat, "usage_usec") / 1e6
        except (OSError, ValueError):
            return None

    def _watch_cpu(self) -> None:
        # The budget is RLIMIT_CPU's hard limit: a worker alone meets its own
        # limit first, and names it itself.
        budget = (self.cpu_seconds or 0) + 1
        while not self.closed.wait(CPU_POLL):
            used = self.cpu_used()
            if used is not None and used >= budget:
                self.cpu_spent = 1
                for group in list(self.groups):
                    _kill_all(group.path)
                return

    def _configure(self, group: _Group) -> None:
        h, path = group.hierarchy, group.path
        if "memory" in h.controllers and self.memory_bytes is not None:
            limit = str(self.memory_bytes + ALLOWANCE)
            if h.version == 1:
                _write(os.path.join(path, "memory.limit_in_bytes"), limit)
                # No swapping out to stay under the limit, where swap is accounted.
                with contextlib.suppress(OSError):
                    _write(os.path.join(path, "memory.memsw.limit_in_bytes"), limit)
            else:
                _write(os.path.join(path, "memory.max"), limit)
                with contextlib.suppress(OSError):
                    _write(os.path.join(path, "memory.swap.max"), "0")
        if "pids" in h.controllers and self.max_processes is not None:
            _write(os.path.join(path, "pids.max"), str(OWN_TASKS + self.max_processes))

    def request(self) -> dict[str, object]:
        """What the worker is told: the groups to join, by the layer each stands for."""
        joined = {h.layer(c): g.path for g in self.groups for h in [g.hierarchy]
                  for c in h.controllers}
        return {**({"cgroups": joined} if joined else {}), **self.extra}

    def _counters(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for group in self.groups:
            h, path = group.hierarchy, group.path
            try:
                if "memory" in h.controllers:
                    events = "memory.oom_control" if h.version == 1 else "memory.events"
                    counts["memory"] = _counter(_read(os.path.join(path, events)), "oom_kill")
                if "pids" in h.controllers:
                    counts["pids"] = _counter(_read(os.path.join(path, "pids.events")), "max")
            except OSError:
                continue
        counts["cpu"] = self.cpu_spent
        return counts

    def reached(self) -> str | None:
        """The limits reached since the last time this was asked, in words; or None."""
        if not self.groups:
            last, self.last = self.last, None
            return last
        counts = self._counters()
        risen = [k for k, v in counts.items() if v > self.seen.get(k, 0)]
        self.seen.update(counts)
        words = []
        if "memory" in risen and self.memory_bytes is not None:
            words.append(tr("the memory limit ({size} MB for all of the submission's "
                            "processes together) was reached, and the kernel ended one of "
                            "them", size=self.memory_bytes // MB))
        if "pids" in risen and self.max_processes is not None:
            words.append(tr("the process limit ({count} processes and threads for the "
                            "submission) was reached", count=self.max_processes))
        if "cpu" in risen and self.cpu_seconds is not None:
            words.append(tr("the CPU time limit ({seconds} s for all of the submission's "
                            "processes together) was reached, and they were ended",
                            seconds=self.cpu_seconds))
        return "; ".join(words) or None

    def close(self) -> None:
        """End every process left in the groups, then remove them."""
        self.closed.set()
        self.last = self.reached()
        for group in self.groups:
            _remove(group.path)
        self.groups = []


def _pids(path: str) -> list[int]:
    try:
        return [int(p) for p in _read(os.path.join(path, "cgroup.procs")).split()]
    except (OSError, ValueError):
        return []


def _kill_once(path: str) -> list[int]:
    """Kill every process in a group now; the ones that were in it."""
    kill = os.path.join(path, "cgroup.kill")  # v2 (5.14+): the whole group at once
    if os.path.exists(kill):
        with contextlib.suppress(OSError):
            _write(kill, "1")
    pids = _pids(path)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return pids


def _kill_all(path: str) -> None:
    """Kill every process in a group, and what they start meanwhile."""
    deadline = time.monotonic() + EMPTY_WAIT
    while _kill_once(path) and time.monotonic() < deadline:
        time.sleep(0.005)


def _remove(path: str) -> None:
    """Kill what is in a group (a process the worker left behind) and remove it."""
    deadline = time.monotonic() + EMPTY_WAIT
    while True:
        _kill_once(path)
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            # EBUSY while a killed process is still exiting.
            if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                return
        time.sleep(0.005)


def with_limit_named(error: dict | None, limits: TreeLimits | None) -> dict | None:
    """A call's error, naming a tree-wide limit reached during the call.

    A call whose processes reached one fails even when the submission carried
    on (a child the kernel ended, a fork that failed and was ignored): its
    answer was made with part of its work missing.
    """
    reached = limits.reached() if limits is not None else None
    if reached is None:
        return error
    if error is None:
        return {"type": "LimitReached", "message": reached, "limit": reached}
    if error.get("limit"):
        return error  # the worker named the limit itself
    message = error.get("message") or ""
    return {**error, "message": f"{reached} ({message})" if message else reached,
            "limit": reached}


def join(groups: Mapping[str, str]) -> list[str]:
    """Move the calling process into each group; the layers that stand for them.

    Called by the worker before any learner code runs, while it is still
    single-threaded: writing 0 moves the writer, and every process it starts
    later is born inside. A group that cannot be joined (a namespace or a
    security module in the way) is left out, and the worker's layers say so.
    """
    joined: set[str] = set()
    for path in sorted(set(groups.values())):
        try:
            _write(os.path.join(path, "cgroup.procs"), "0")
        except OSError:
            continue
        joined.add(path)
    return [layer for layer, path in groups.items() if path in joined]
