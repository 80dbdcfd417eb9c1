"""What a submission draws from torch's or Python's global generator, where it should
draw from the one it was handed, is the same on every run, so that its grade is too
(grader/sandbox/wire/limits.py's `reseed_global_generators`, which the kata's worker
and the learners' copy both call)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

# Draws at load (module level) and in the call, from both global generators.
SUBMISSION = """import random, torch
AT_LOAD = torch.rand(1).item()
class Solution:
    def draw(self):
        return [AT_LOAD, torch.rand(1).item(), random.random()]
"""

# Loads it in a worker of this process and calls it twice; prints both answers.
CALLS = """import json, sys
from grader.sandbox.worker.serve import WorkerLoop
worker = WorkerLoop()
assert worker.load(sys.argv[1], "Solution", ["draw"]) == {"ok": True}
print(json.dumps([repr(worker.call("draw", [], {}, [])["result"]) for _ in range(2)]))
"""


def test_global_draws_are_the_same_in_every_process(tmp_path: Path) -> None:
    solution = tmp_path / "solution.py"
    solution.write_text(SUBMISSION, encoding="utf-8")
    # Two processes: torch seeds its global generator afresh in each.
    answers = [json.loads(subprocess.run(
        [sys.executable, "-c", CALLS, str(solution)], cwd=ROOT, capture_output=True,
        text=True, timeout=120, check=True).stdout) for _ in range(2)]
    assert answers[0] == answers[1]
    first, second = answers[0]
    # Seeded once a load: a second call draws on (a dropout left active is told so).
    assert first != second and "0." in first
