"""What a call that gave no answer in time was doing, told from what was measured.

A call is given a time limit, and the machine may be shared: a right but slow
answer on a loaded machine, a loop that never ends, and code blocked waiting
(`input()`, a sleep, a lock) all end the same way, with no answer. They differ
in the CPU time the worker's tree used while the grader waited, and in how busy
the machine was, which is what the message says and goes by:

- it computed nearly the whole time (most of a core): an endless loop, or far
  more work than the problem needs;
- it used next to no CPU at all: it was waiting (`input()`, a sleep, a lock),
  however busy the machine;
- in between, on a busy machine: it computed whenever the machine let it, and
  its share cannot tell a loop from slow code that would finish on a quieter
  machine, so both are said, with more time to try;
- in between, on a quiet machine: it was waiting, not computing.

Where the worker's CPU time cannot be read (no cgroup, no process to ask), the
message says only that no answer came.
"""

from __future__ import annotations

import contextlib
import os

from grader.locale import tr

# Shares of one core: above BUSY the call computed the whole time; below WAITING it
# waited, however busy the machine. The machine is busy when its load per core
# reaches LOADED.
BUSY = 0.75
WAITING = 0.05
LOADED = 1.0


def machine_load() -> float | None:
    """The one-minute load per core: the kernel's (Linux, macOS), or on Windows, which
    has none, psutil's, sampled every 5 seconds from its first call on (the spawned
    workers' start makes it: until then it reads 0, a quiet machine)."""
    try:
        import psutil

        return psutil.getloadavg()[0] / (os.cpu_count() or 1)
    except Exception:  # noqa: BLE001 - a measure for a message, never the grade's trouble
        return None


def process_tree_cpu(pid: int, children: bool = True) -> float | None:
    """CPU seconds used by a process and the processes it started (psutil, on every
    platform), where it can be asked; with children=False by the process alone: finding
    the children reads every process of the machine (0.5 ms among 123 processes, the
    process alone 0.02 ms)."""
    try:
        import psutil

        root = psutil.Process(pid)
        total = 0.0
        for process in (root, *(root.children(recursive=True) if children else ())):
            with contextlib.suppress(psutil.Error):
                total += sum(process.cpu_times()[:2])  # user and system
        return total
    except Exception:  # noqa: BLE001 - a measure for a message, never the grade's trouble
        return None


def what_it_did(cpu: float | None, waited: float, load: float | None) -> str:
    """The case of the module's docstring a time-out is: "unmeasured", "computing",
    "waiting" (on a busy machine), "starved" (in between, on a busy machine) or
    "quiet" (in between, or less, on a quiet machine)."""
    if cpu is None or waited <= 0:
        return "unmeasured"
    share = max(cpu, 0.0) / waited
    busy = load is not None and load >= LOADED
    if share >= BUSY:
        return "computing"
    if not busy:
        return "quiet"
    return "waiting" if share < WAITING else "starved"


def starved(cpu: float | None, waited: float, load: float | None) -> bool:
    """Whether a call that gave no answer may have been slow only because the machine
    was busy: it computed, but got too little of a core for its share to tell slow
    code from an endless loop, or its CPU time could not be read on a busy machine.
    A gradebook grades such a learner once more instead of keeping the time-out."""
    case = what_it_did(cpu, waited, load)
    return case == "starved" or (case == "unmeasured" and load is not None and load >= LOADED)


def no_answer(limit: float, cpu: float | None, waited: float,
              load: float | None = None) -> str:
    """The time-out's message: `cpu` seconds of CPU used in the `waited` seconds of
    a call limited to `limit`, on a machine with `load` per core."""
    case = what_it_did(cpu, waited, load)
    if case == "unmeasured":
        return tr("no answer within {limit:g} seconds (an endless loop, or far slower than "
                  "needed?)", limit=limit)
    used = tr("{cpu:.1f} s of CPU in {waited:.1f} s", cpu=cpu, waited=waited)
    if case == "computing":
        return tr("no answer within {limit:g} seconds: it computed the whole time ({used}): "
                  "an endless loop, or far more work than the problem needs",
                  limit=limit, used=used)
    if case == "waiting":
        return tr("no answer within {limit:g} seconds: it was waiting, not computing ({used}): "
                  "blocked on input(), a sleep or a lock?", limit=limit, used=used)
    if case == "starved":
        # A loop and slow code both get what the machine gives them: no share tells
        # them apart here.
        return tr("no answer within {limit:g} seconds: it computed whenever the busy machine "
                  "let it ({used}, load {load:.1f} per core): an endless loop, or code that "
                  "is only slow here and now; grade again when it is quieter, or give it "
                  "more time (--timeout {longer:g})",
                  limit=limit, used=used, load=load, longer=2 * limit)
    return tr("no answer within {limit:g} seconds: it was waiting, not computing ({used}, on "
              "a quiet machine): blocked on input(), a sleep or a lock?",
              limit=limit, used=used)
