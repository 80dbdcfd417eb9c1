"""How the benchmarks here time a command: as a whole process, its output dropped."""

from __future__ import annotations

import os
import subprocess
import time

# A command timed as a learner's Python (and CI, .ci/run) runs it: caching the modules
# it compiles (__pycache__, ignored by git). A machine may turn that off for every
# process (PYTHONDONTWRITEBYTECODE); each command would then compile the grader again.
LEARNER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str]) -> float:
    """The wall time of `command`, in seconds, whatever its exit code."""
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started
