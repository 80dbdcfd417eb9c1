"""How long the test suite's tiers take, as ratios to a bare `python -c "import torch"`.

The default tier (`python -m pytest`) is what a contributor waits for after a change,
and the check tier (`python -m pytest -m check`) what they run before each commit.
Each run times the baseline and every tier chosen in turn, so that load on a shared
machine hits them alike; the figures are medians, and a tier that fails does not
count (a fast failing suite is not a result).

    python benchmarks/suite_speed.py [--runs 3] [--only default check]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from timing import LEARNER_ENV

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Tier:
    name: str
    what: str
    args: list[str]
    # The largest ratio allowed. The default tier's goal is 3 minutes on two quiet
    # cores, and the check tier's the time a contributor waits before a commit without
    # noticing, 15 s; as ratios to the quickest bare `import torch` seen on such a
    # machine (1.1 s, x86_64 with AVX-512), 160x and 14x. Where torch imports slower,
    # the same ratios allow more time, as a slower machine needs.
    goal: float


TIERS = [
    Tier("default", "python -m pytest: the checks, unit tests and smoke of each path",
         [], 160.0),
    Tier("check", "python -m pytest -m check: the static checks", ["-m", "check"], 14.0),
]


def timed(command: list[str]) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False,
                          env=LEARNER_ENV)
    return time.perf_counter() - started, done.returncode, done.stdout[-2000:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", nargs="*", choices=[t.name for t in TIERS])
    args = parser.parse_args()
    chosen = [t for t in TIERS if not args.only or t.name in args.only]
    baseline: list[float] = []
    times: dict[str, list[float]] = {t.name: [] for t in chosen}
    for _ in range(args.runs):
        baseline.append(timed([sys.executable, "-c", "import torch"])[0])
        for tier in chosen:
            seconds, code, tail = timed([sys.executable, "-m", "pytest", "-q", *tier.args])
            if code != 0:
                print(f"{tier.name}: pytest exited with {code}; fix that before timing it\n"
                      f"{tail}")
                return 1
            times[tier.name].append(seconds)
    base = statistics.median(baseline)
    print(f"machine: {platform.machine()}, {platform.system()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, {len(baseline)} runs, medians")
    print(f"baseline: import torch {base:.2f} s")
    ok, results = True, {}
    for tier in chosen:
        seconds = statistics.median(times[tier.name])
        ratio = seconds / base
        ok &= ratio <= tier.goal
        mark = "ok " if ratio <= tier.goal else "OVER"
        print(f"{mark} {ratio:6.1f}x (goal <= {tier.goal:g}x)  {seconds:7.1f} s  {tier.what}")
        results[tier.name] = round(ratio, 1)
    print(json.dumps({"baseline_s": round(base, 2), "ratios": results}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
