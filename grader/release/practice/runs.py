"""The practice grade's problems, run in a process apart from the grade's, with time limits.

The learner's code runs in that process, not the grade's: an endless loop is ended
after the call's time limit (as in the kata, the check it was in fails with its
inputs, the checks before it keep their verdicts, those after it are not run, and the
next problem goes on), sys.exit() or a crash ends only that process, and what one
problem's file does to torch (its default dtype, gradients turned off, a function
replaced) stays there.

One process serves problem after problem, each in torch's state as the process
found it (its default dtype, gradients on or off, its threads, and the functions of
torch, torch.nn, torch.nn.functional and torch.Tensor), so that what a problem's
first model costs to load (about 2 s) is paid once, as in one process; it is
replaced after a time-out or a crash. On Linux it is forked from this one, which
has torch loaded already; elsewhere (macOS, Windows) it is spawned.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

from gpt_kata_practice.practice_grade import Reached, Result, grade_problem, timed_out

from grader.grading.values.failures import BUSY, STUCK
from grader.locale import tr
from grader.sandbox.host.slow_or_endless import (
    machine_load,
    no_answer,
    process_tree_cpu,
    starved,
)

# Seconds the grade's own work may take between two calls of the learner's code: a
# new process loading torch, a problem's stored answers and first model.
GRADER_GRACE = 60.0


class PracticeRuns:
    """Grades problems one at a time in a child process; `close()` ends it."""

    def __init__(self, call_timeout: float, budget: float) -> None:
        self.call_timeout, self.budget = call_timeout, budget
        # The kata's switch to take macOS's and Windows's path on Linux (for the tests).
        self.fork = (sys.platform.startswith("linux")
                     and os.environ.get("GPT_KATA_SPAWN_WORKERS") != "1")
        self.context = multiprocessing.get_context("fork" if self.fork else "spawn")
        self.process: Any = None
        self.connection: Any = None

    def grade(self, slug: str, path: Path) -> Result:
        if self.process is None:
            self._start()
        try:
            self.connection.send((slug, str(path)))
        except OSError:  # it ended after its last answer (BrokenPipeError)
            return self._ended(slug)
        # The learner's code runs within the call's limit, and all of a problem's calls
        # within its budget; the grade's own work between calls within the grace.
        running_since: float | None = None
        cpu_since: float | None = None  # the process's CPU time as the code began to run
        spent = 0.0
        plan: list[tuple[str, str | None]] = []  # the checks to come, told at the start
        reached: Reached | None = None  # the check the code is in, with the result so far
        while True:
            limit = min(self.call_timeout, self.budget - spent)
            left = (GRADER_GRACE if running_since is None
                    else limit - (time.monotonic() - running_since))
            if left <= 0 or not self.connection.poll(left):
                if running_since is None:
                    said = tr("no answer within {limit:g} seconds (an endless loop, or far "
                              "slower than needed?)", limit=GRADER_GRACE)
                else:  # what the code did meanwhile, as the kata's time-out says it
                    cpu = process_tree_cpu(self.process.pid)
                    used = cpu - cpu_since if cpu is not None and cpu_since is not None \
                        else None
                    waited, load = time.monotonic() - running_since, machine_load()
                    said = no_answer(limit, used, waited, load)
                    if reached is not None:  # in a check, not in loading the file
                        self.close()
                        return timed_out(reached, plan, said,
                                         BUSY if starved(used, waited, load) else STUCK)
                self.close()
                return Result(slug, unavailable=said, kind="unavailable")
            try:
                kind, value = self.connection.recv()
            except (EOFError, OSError):
                return self._ended(slug)
            if kind == "result":
                return value
            if kind == "plan":
                plan = value
                continue
            if kind == "case":
                reached = value
                continue
            now = time.monotonic()
            if value:
                # At every call the process alone, which is cheap; a time-out reads its
                # tree, where a process an earlier call left running counts whole (only
                # the message can be off, and only then).
                running_since = now
                cpu_since = process_tree_cpu(self.process.pid, children=False)
            elif running_since is not None:
                spent, running_since = spent + now - running_since, None

    def _ended(self, slug: str) -> Result:
        """The result of a problem whose process ended under it."""
        process = self.process
        self.close()  # its exit code is known once it is joined
        return Result(slug, unavailable=tr(
            "the process running your code ended (exit code {code}): sys.exit(), "
            "os._exit() or a crash in solution.py?", code=process.exitcode),
            kind="unavailable")

    def _start(self) -> None:
        ours, theirs = self.context.Pipe()
        self.process = self.context.Process(target=serve,
                                            args=(theirs, self.fork, os.getpid()), daemon=True)
        self.process.start()
        theirs.close()
        self.connection = ours

    def close(self) -> None:
        process, connection = self.process, self.connection
        self.process = self.connection = None
        try:
            if connection is not None:
                connection.close()
            if process is not None:
                process.join(timeout=1.0)
        finally:
            # Even where the wait is interrupted: learner code that sent SIGINT to the
            # grade at every call sent another meanwhile, and its process outlived the
            # grade, waiting on a pipe it holds both ends of.
            if process is not None and process.is_alive():
                process.kill()
                process.join()

    def __enter__(self) -> PracticeRuns:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def serve(connection: Any, forked: bool = False, grade: int = 0) -> None:
    """The child: grade each (slug, path) it is sent, in torch's state as it found it,
    saying when the learner's code starts and stops running.

    forked: whether it is a fork of the grade's process. A notebook that ran torch on
    more than one thread (examples(), a forward pass) has an OpenMP thread pool, which
    a forked child cannot use: its first parallel operation would wait forever. The
    child then computes on one thread, as the kata's workers do."""
    draw_off_screen()
    left_to_the_grade()
    if forked:
        import torch

        ends_with_the_grade(grade)
        torch.set_num_threads(1)
    state = torch_state()
    while True:
        try:
            slug, path = connection.recv()
        except (EOFError, OSError):
            return
        restore(state)
        try:
            result = grade_problem(slug, Path(path),
                                   running=lambda now: connection.send(("running", now)),
                                   told=lambda what, value: connection.send((what, value)))
            connection.send(("result", result))
        except OSError:  # the grade closed its end as it stopped: nobody to tell
            return


def ends_with_the_grade(grade: int) -> None:
    """A forked process (Linux) is killed as the grade's process (`grade`, its pid)
    ends, however it ends (SIGKILL too): it holds the grade's end of the pipe as well
    as its own, so it would never read the end of the pipe, and would wait on it for
    good."""
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no C library to ask: close() still ends it
        return
    if os.getppid() != grade:  # the grade ended before the request was made
        os._exit(1)


PR_SET_PDEATHSIG = 1  # prctl(2)


def left_to_the_grade() -> None:
    """A Ctrl-C is the grade's to act on: pressed at a terminal it reaches this process
    too, which raised its own KeyboardInterrupt (a traceback of this process, and the
    grade's next send met a broken pipe and ended it with 1, not 130). The grade ends
    this process as it stops (`close`). SIGTERM and SIGHUP end it at once, as Python's
    default does, not as the grade's handlers it was forked with."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):  # Windows has no SIGHUP
            signal.signal(getattr(signal, name), signal.SIG_DFL)


def draw_off_screen() -> None:
    """matplotlib draws without a window in this process: a learner's plt.show() returns
    at once, where a desktop's backend (macOS's, Windows's, Linux's with a display)
    opened a window and waited for it to close, until the call ran out of time."""
    os.environ["MPLBACKEND"] = "Agg"
    if "matplotlib" in sys.modules:  # imported already, its backend chosen: choose again
        sys.modules["matplotlib"].use("Agg")


# What a learner's file can change of torch for every later problem in one process.
PATCHABLE = ("torch", "torch.nn", "torch.nn.functional", "torch.Tensor")


def torch_state() -> dict[str, Any]:
    import torch

    return {"dtype": torch.get_default_dtype(), "grad": torch.is_grad_enabled(),
            "threads": torch.get_num_threads(),
            "names": {where: dict(vars(namespace(where))) for where in PATCHABLE}}


def restore(state: dict[str, Any]) -> None:
    import torch

    torch.set_default_dtype(state["dtype"])
    torch.set_grad_enabled(state["grad"])
    torch.set_num_threads(state["threads"])
    for where, names in state["names"].items():
        target = namespace(where)
        for name, value in names.items():
            if vars(target).get(name) is not value:
                setattr(target, name, value)


def namespace(where: str) -> Any:
    import torch

    return torch.Tensor if where == "torch.Tensor" else importlib.import_module(where)
