"""How soon `gpt-kata watch` shows the grade of a save, as a ratio to `import torch`.

A kata folder is made in a temporary directory with a passing solution of the
problem; `gpt-kata watch PROBLEM` runs on it without a terminal (one line per
grade). The file is then saved again and again, and each time the wait until
the grade's line appears is measured. The baseline, a bare
`python -c "import torch"`, is timed in the same run. The goal is at most 0.5x.

    python benchmarks/watch_speed.py [--runs 7] [--problem generate]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import timed

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--problem", default="generate")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from grader.registry import find

    problem = find(args.problem)
    with tempfile.TemporaryDirectory() as tmp:
        kata = Path(tmp)
        shutil.copytree(ROOT / "problems", kata / "problems")
        target = kata / "problems" / problem.folder / "solution.py"
        shutil.copy(ROOT / "solutions" / problem.folder / "solution.py", target)
        watcher = subprocess.Popen(
            [sys.executable, "-m", "grader", "watch", problem.slug, "--stay"], cwd=kata,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert watcher.stdout is not None
        try:
            first = watcher.stdout.readline()
            if f"{problem.folder} pass" not in first:
                print(f"the reference did not pass under watch: {first.strip()!r}")
                return 1
            waits, baseline = [], []
            source = target.read_text()
            for i in range(args.runs):
                baseline.append(timed([sys.executable, "-c", "import torch"]))
                time.sleep(0.3)  # a distinct modification time for each save
                started = time.perf_counter()
                target.write_text(source + f"\n# save {i}\n")
                line = watcher.stdout.readline()
                waits.append(time.perf_counter() - started)
                if f"{problem.folder} pass" not in line:
                    print(f"save {i} was not graded as a pass: {line.strip()!r}")
                    return 1
        finally:
            watcher.kill()
            watcher.wait()
    base, wait = statistics.median(baseline), statistics.median(waits)
    print(f"import torch: median {base:.2f} s; a save of {problem.folder} graded and shown: "
          f"median {wait:.2f} s over {args.runs} saves")
    print(f"ratio {wait / base:.2f} (goal <= {GOAL})")
    return 0 if wait / base <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
