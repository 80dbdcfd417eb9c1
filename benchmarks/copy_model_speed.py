"""How much loading the shipped GPT costs a learners' copy, as ratios to `import torch`.

The release writes each model a copy runs as a graph of torch operations and its
weights (grader/release/practice/program.py); the copy rebuilds it with torch.fx.
This writes the shipped GPT as the release does, and as the `.pt2` archive that
`torch.export.save` writes, then times fresh processes that import torch and load it
(and call it once), against a bare `import torch` timed in the same run. Goal for the
copy's format: at most 1.15x. The archive is timed beside it, as what the format
saves a learner's every grade.

    python benchmarks/copy_model_speed.py [--runs 5]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import LEARNER_ENV, timed

ROOT = Path(__file__).resolve().parent.parent
GOAL = 1.15

LOAD_GRAPH = """\
import sys, torch
from grader.release.practice.program import read_graph
read_graph(sys.argv[1])(torch.zeros(1, 8, dtype=torch.long))
"""
LOAD_ARCHIVE = """\
import sys, torch
torch.export.load(sys.argv[1]).module()(torch.zeros(1, 8, dtype=torch.long))
"""


def write_models(folder: Path) -> tuple[Path, Path]:
    sys.path.insert(0, str(ROOT))
    import torch

    from grader.model import artifacts
    from grader.release.models import gpt_program, saved

    program = gpt_program(artifacts.shipped_model())
    graph = folder / "shipped.safetensors"
    graph.write_bytes(saved(program))
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    archive = folder / "shipped.pt2"
    archive.write_bytes(buffer.getvalue())
    return graph, archive


def median(runs: int, code: str, *argv: str) -> float:
    """The median wall time of `python -c code argv...`, once it has run without error."""
    command = [sys.executable, "-c", code, *argv]
    tried = subprocess.run(command, cwd=ROOT, env=LEARNER_ENV, capture_output=True, text=True,
                           check=False)
    if tried.returncode != 0:
        raise SystemExit(f"{code.splitlines()[-1]} failed: {tried.stderr[-2000:]}")
    return statistics.median(timed(command) for _ in range(runs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        graph, archive = write_models(Path(folder))

        base = median(args.runs, "import torch")
        loaded = median(args.runs, LOAD_GRAPH, str(graph))
        from_archive = median(args.runs, LOAD_ARCHIVE, str(archive))
    ratio = loaded / base
    print(f"baseline: import torch {base:.2f} s")
    mark = "ok " if ratio <= GOAL else "OVER"
    print(f"{mark} {ratio:.2f}x (goal <= {GOAL:g}x)  the copy's graph: {loaded:.2f} s")
    print(f"    {from_archive / base:.2f}x  a torch.export archive: {from_archive:.2f} s")
    print(json.dumps({"baseline_s": round(base, 2), "graph": round(ratio, 2),
                      "archive": round(from_archive / base, 2)}))
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
