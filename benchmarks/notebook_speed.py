"""How soon `check()` grades a class in a notebook session, as ratios to `import torch`.

One Python process stands in for a notebook's kernel: it loads the reference
class of a problem from its file (so that its source can be found, as a cell's
can) and calls `check(problem, Solution)` again and again, timing each call. The
first check starts the pool's fork server, which the later ones reuse. The
baseline, a bare `python -c "import torch"`, is timed in the same run. The goal
for a later check is that of a regrade in `gpt-kata watch`: at most 0.5x.

    python benchmarks/notebook_speed.py [--runs 5] [--problem softmax]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from timing import timed

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.5

SESSION = """\
import importlib.util, json, os, sys, time
spec = importlib.util.spec_from_file_location("cells", sys.argv[1])
cells = importlib.util.module_from_spec(spec)
sys.modules["cells"] = cells  # where check() finds the names the class uses
spec.loader.exec_module(cells)
from grader import check
times = []
for _ in range(int(sys.argv[3])):
    started = time.perf_counter()
    passed = check(sys.argv[2], cells.Solution)
    times.append(time.perf_counter() - started)
    if not passed:
        sys.exit("the reference did not pass")
print(json.dumps(times), file=sys.__stderr__)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="checks after the first")
    parser.add_argument("--problem", default="softmax")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from grader.registry import find

    problem = find(args.problem)
    source = ROOT / "solutions" / problem.folder / "solution.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SESSION, str(source), problem.slug,
                           str(args.runs + 1)], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        print(f"the session failed: {done.stderr[-2000:]}")
        return 1
    first, *later = json.loads(done.stderr.strip().splitlines()[-1])
    base = statistics.median(timed([sys.executable, "-c", "import torch"]) for _ in range(3))
    again = statistics.median(later)
    ratio = again / base
    print(f"baseline: import torch {base:.2f} s")
    print(f"first check: {first:.2f} s ({first / base:.2f}x), starting the fork server")
    mark = "ok " if ratio <= GOAL else "OVER"
    print(f"{mark} {ratio:.2f}x (goal <= {GOAL:g}x)  a later check of {problem.slug}: "
          f"{again:.2f} s, median of {len(later)}")
    print(json.dumps({"baseline_s": round(base, 2), "first": round(first / base, 2),
                      "later": round(ratio, 2)}))
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
