"""Where one grade's time goes: marks from the grader's start to its exit.

    python benchmarks/grade_timeline.py [--runs 5] [-- GRADE ARGS]

Runs `python -m grader grade GRADE ARGS -q` (by default `generate --reference`, the
passing grade of grade_speed.py) with a mark written as each heavy import begins
and ends and as each step of the grade begins and ends, and prints each mark's
median time since the process started, over the runs. Read it for the critical
path: whether the grader reaches its checks after its worker has loaded (the
grader's own work decides) or before (the fork server's does), and how long the
imports, the checks and the reports take.

Only the grader's process is marked; the fork server and the workers show
through the pool's steps (`WorkerPool._greet` begins once a worker is forked,
and ends when its hello has come and it has been asked to load). The time since
the process started is read from /proc on Linux, elsewhere counted from this
script's first line in the child, which misses the interpreter's own start-up.
"""

from __future__ import annotations

import argparse
import functools
import importlib.abc
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timing import LEARNER_ENV

ROOT = Path(__file__).resolve().parent.parent
LOG_VARIABLE = "GPT_KATA_TIMELINE_LOG"
DEFAULT_GRADE = ["generate", "--reference"]

# The imports whose begin and end are marked.
IMPORTS = ("pytest", "torch", "hypothesis", "grader.grading.engine.session")
# The grade's steps (module: callables, dotted inside the module) whose begin and end
# are marked; a step the grader no longer has is reported, not skipped silently.
STEPS = {
    "grader.sandbox.host.pool": ("WorkerPool.start", "WorkerPool._greet"),
    "grader.grading.engine.plugin": ("run_checks",),
    "grader.learner.shown": ("write_reports",),
    "grader.learner.output": ("exit_now",),
}


def started_at() -> float:
    """The process's start on the `time.perf_counter` scale (now, off Linux)."""
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.perf_counter() - age
    except (OSError, ValueError, AttributeError, IndexError):
        return time.perf_counter()


class Marks:
    """Marks appended to the log file, one line each: seconds, then what."""

    def __init__(self, log: str) -> None:
        self.start = started_at()
        self.fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def __call__(self, what: str) -> None:
        os.write(self.fd, f"{time.perf_counter() - self.start:.4f}\t{what}\n".encode())


def marked(mark: Marks, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        mark(f"> {name}")
        try:
            return function(*args, **kwargs)
        finally:
            mark(f"< {name}")

    return call


def mark_steps(mark: Marks, module: Any) -> None:
    for dotted in STEPS.get(module.__name__, ()):
        *path, name = dotted.split(".")
        owner = module
        for part in path:
            owner = getattr(owner, part, None)
        found = getattr(owner, "__dict__", {}).get(name)
        if found is None:
            mark(f"! {module.__name__}.{dotted} is gone: update STEPS")
            continue
        static = isinstance(found, staticmethod)
        wrapped = marked(mark, dotted, found.__func__ if static else found)
        setattr(owner, name, staticmethod(wrapped) if static else wrapped)


class Watcher(importlib.abc.MetaPathFinder):
    """Marks the imports in IMPORTS and wraps the steps of a module in STEPS as it loads."""

    def __init__(self, mark: Marks) -> None:
        self.mark = mark

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in IMPORTS and fullname not in STEPS:
            return None
        sys.meta_path.remove(self)  # the spec the other finders give
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            if fullname in IMPORTS:
                self.mark(f"> import {fullname}")
            run_module(module)
            if fullname in IMPORTS:
                self.mark(f"< import {fullname}")
            mark_steps(self.mark, module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def child(grade_args: list[str]) -> None:
    """In the marked process: `python -m grader grade ARGS`."""
    import runpy

    mark = Marks(os.environ[LOG_VARIABLE])
    mark("python up")
    sys.meta_path.insert(0, Watcher(mark))
    sys.argv = ["grader", "grade", *grade_args]
    runpy.run_module("grader", run_name="__main__", alter_sys=True)


def one_run(grade_args: list[str]) -> tuple[dict[str, float], float, int]:
    """Each mark's first time in one run, the run's wall time from outside, and the
    grade's exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "marks"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--child", *grade_args, "-q"], cwd=ROOT,
            env={**LEARNER_ENV, LOG_VARIABLE: str(log)}, check=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        marks: dict[str, float] = {}
        for line in log.read_text(encoding="utf-8").splitlines():
            seconds, what = line.split("\t", 1)
            marks.setdefault(what, float(seconds))
    return marks, wall, done.returncode


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("grade", nargs="*", help="gpt-kata grade's arguments (after --)")
    args = parser.parse_args()
    grade_args = args.grade or DEFAULT_GRADE
    runs = [one_run(grade_args) for _ in range(args.runs)]
    # In the order first seen, which a tie of medians keeps (sorted is stable).
    names = dict.fromkeys(what for marks, _, _ in runs for what in marks)
    print(f"gpt-kata grade {' '.join(grade_args)} -q: median seconds since the process "
          f"started, {args.runs} runs")
    for what in sorted(names, key=lambda w: statistics.median(
            m[w] for m, _, _ in runs if w in m)):
        times = [m[what] for m, _, _ in runs if what in m]
        print(f"{statistics.median(times):7.3f}  {what}")
    codes = sorted({code for _, _, code in runs})
    print(f"{statistics.median(wall for _, wall, _ in runs):7.3f}  the process ended "
          f"(timed from outside), exit code {', '.join(map(str, codes))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
