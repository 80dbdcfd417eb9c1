"""A class of 20 graded two learners at a time, against one at a time.

Both gradebooks of the synthetic class (grader/maintainer/synthetic_class.py,
crop-context and decode) are timed in this run, in turn, and the medians
compared. The goal on 2 cores: --jobs 2 takes at most 0.6x the time of --jobs 1.

    python benchmarks/gradebook_speed.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.6


def grade(roster: Path, out: Path, jobs: int) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", str(roster), "crop-context", "decode",
         "--out", str(out), "--jobs", str(jobs), "--force", "--timeout", "2", "-q"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"gradebook --jobs {jobs} failed: {done.stderr[-500:]}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from grader.maintainer.synthetic_class import make_roster

    one, two = [], []
    with tempfile.TemporaryDirectory() as tmp:
        roster = Path(tmp) / "roster"
        make_roster(roster, Path(tmp) / "marker")
        for _ in range(args.runs):
            one.append(grade(roster, Path(tmp) / "one", 1))
            two.append(grade(roster, Path(tmp) / "two", 2))
    a, b = statistics.median(one), statistics.median(two)
    print(f"20 learners: --jobs 1 median {a:.1f} s, --jobs 2 median {b:.1f} s "
          f"over {args.runs} runs")
    print(f"ratio {b / a:.2f} (goal <= {GOAL})")
    return 0 if b / a <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
