"""The one line a command prints when the learner's code runs short of the full sandbox.

Every command that runs a learner's code (grade, watch, talk, trace, `train --yours`,
a notebook's check()) says so once per run: off Linux, and on the spawned-worker path,
the code runs without the sandbox; on Linux a system may refuse some layers (user
namespaces, a cgroup, the scratch tmpfs), and the terminal should not look as it
does under the full sandbox then. What ran is what the worker reported in its hello
(grader/sandbox/worker/isolation.py's isolate()), not what the grader guessed beforehand.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading

from grader.locale import tr
from grader.sandbox.host.pool import SPAWN_VARIABLE, WorkerPool
from grader.sandbox.worker.machine import missing_tree_layers

# Layers a worker reports (a prefix of its names) that every Linux sandbox has where the
# kernel offers them, and how the notice names them when they did not run. The layers
# over the worker's whole tree are named as the worker names them (sandbox/worker/machine.py).
_LAYERS = (("user-namespace", "user namespaces"), ("landlock-abi", "Landlock"),
           ("seccomp-no-sockets", "seccomp"))


def unsandboxed(pool: WorkerPool) -> str | None:
    """Why the pool's workers run without the sandbox at all, or None if they do not.

    Known as soon as the pool has started: it needs no worker yet.
    """
    if not sys.platform.startswith("linux"):
        return tr("your code runs without the sandbox on this system: isolation needs Linux")
    if pool.sandbox is None:
        return tr("your code runs without the sandbox: --no-sandbox")
    if not pool.use_fork:
        if os.environ.get(SPAWN_VARIABLE) == "1":
            return tr("your code runs without the sandbox: {variable}=1 spawns its workers "
                      "unisolated", variable=SPAWN_VARIABLE)
        return tr("your code runs without the sandbox: the fork server could not start, so "
                  "the grader spawns its workers unisolated")
    return None


def missing_layers(layers: list[str]) -> list[str]:
    """The sandbox layers a worker reported it could not set up, in words; [] for none,
    or when no worker has reported yet."""
    if not layers:
        return []
    missing = [name for prefix, name in _LAYERS
               if not any(layer.startswith(prefix) for layer in layers)]
    if "user namespaces" in missing:
        # Without unshare the grader cannot ask for them; with it, the system said no.
        why = "refused" if shutil.which("unshare") else "no unshare command"
        missing[missing.index("user namespaces")] = f"user namespaces ({why})"
    # From the names that ran, as the worker finds its own "missing:" entry: that entry
    # is for a reader of the report's list, and the first to go when the list is cut.
    return missing + missing_tree_layers(layers)


def layers_line(layers: list[str]) -> str | None:
    """The line naming the layers missing from a worker's report, or None if none are."""
    missing = missing_layers(layers)
    if not missing:
        return None
    return tr("sandbox layers missing on this system: {layers}; your code runs under the "
              "others", layers=", ".join(missing))


def sandbox_notice(pool: WorkerPool) -> str | None:
    """The one line for this pool, from what is known now, or None under the full sandbox
    (or before any worker has said which layers ran)."""
    return unsandboxed(pool) or layers_line(pool.layers)


class NoticedPool(WorkerPool):
    """A pool that says on stderr, once, how its workers run short of the full sandbox.

    The line comes with the first worker's hello, before that worker loads the
    learner's code: only then is it known which layers ran. A command that runs
    no learner code (the reference talks, say) prints nothing. `notice` keeps the line,
    for a screen that is drawn again (watch's).
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.notice: str | None = None
        self._unsaid = threading.Lock()  # taken by the first hello, and kept

    def welcome(self, hello: dict) -> None:
        super().welcome(hello)
        if not self._unsaid.acquire(blocking=False):
            return  # a hello before this one says the line
        self.notice = sandbox_notice(self)
        if self.notice:
            # The process's own stderr: a grade runs its checks under pytest's
            # --capture=sys, which would swallow a line written to sys.stderr.
            print(f"({self.notice})", file=sys.__stderr__ or sys.stderr, flush=True)
