"""Cost of `gpt-kata grade generate --reference` as a ratio to a bare `import torch`.

Both are timed in this run, on this machine, alternating, so load on a shared
machine hits both alike. The goal is a ratio of at most 2.5.

    python benchmarks/grade_speed.py [--runs 5] [--problem generate]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

GOAL = 2.5


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--problem", default="generate")
    args = parser.parse_args()
    baseline_cmd = [sys.executable, "-c", "import torch"]
    grade_cmd = [sys.executable, "-m", "grader", "grade", args.problem, "--reference", "-q"]
    if subprocess.run(grade_cmd, stdout=subprocess.DEVNULL).returncode != 0:
        print("the reference does not pass; fix that before timing it")
        return 1
    baseline, grading = [], []
    for _ in range(args.runs):
        baseline.append(timed(baseline_cmd))
        grading.append(timed(grade_cmd))
    b, g = statistics.median(baseline), statistics.median(grading)
    print(f"import torch                         median {b:.2f} s over {args.runs} runs")
    print(f"grade {args.problem} --reference{'':<{13 - len(args.problem)}} median {g:.2f} s")
    print(f"ratio {g / b:.2f} (goal <= {GOAL})")
    return 0 if g / b <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
