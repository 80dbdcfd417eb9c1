"""The untouched starters graded on the spawned-worker path, against a bare torch import.

The spawned path is the one macOS and Windows take (forced here with
GPT_KATA_SPAWN_WORKERS=1): one spawned Python imports torch and serves every
problem of the grade in turn (grader.sandbox.host.process.SpawnHost). The forked
path's time is shown for comparison. Runs alternate, and medians are
compared. The goal (issue 19): the spawned grade at most 4x a torch import.

    python benchmarks/spawned_speed.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 4.0


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode not in (0, 1):  # 1: the starters fail, as they should
        raise SystemExit(f"{argv[3:5]} failed: {done.stderr[-500:]}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    plain = {k: v for k, v in os.environ.items() if k != "GPT_KATA_SPAWN_WORKERS"}
    spawned_env = {**plain, "GPT_KATA_SPAWN_WORKERS": "1"}
    grade = [sys.executable, "-m", "grader", "grade", "--submission",
             str(ROOT / "data" / "starters"), "-q"]
    torch_import, spawned, forked = [], [], []
    for _ in range(args.runs):
        torch_import.append(timed([sys.executable, "-c", "import torch"], plain))
        spawned.append(timed(grade, spawned_env))
        forked.append(timed(grade, plain))
    t, s, f = (statistics.median(x) for x in (torch_import, spawned, forked))
    print(f"torch import {t:.1f} s; the starters spawned {s:.1f} s, forked {f:.1f} s "
          f"(medians of {args.runs} runs)")
    print(f"spawned / torch import {s / t:.1f}x (goal <= {GOAL:g}x); "
          f"forked / torch import {f / t:.1f}x")
    return 0 if s / t <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
