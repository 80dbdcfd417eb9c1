"""How the benchmarks here time a command: as a whole process, its output dropped."""

from __future__ import annotations

import subprocess
import time


def timed(command: list[str]) -> float:
    """The wall time of `command`, in seconds, whatever its exit code."""
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started
