"""The spawned-worker path (macOS, Windows) grades what the fork server's path grades.

Forced on Linux with GPT_KATA_SPAWN_WORKERS=1: every worker is a fresh
`python -m grader.sandbox.worker.serve`, with no fork server and no witness, so the
worker counts the model calls itself. A spawned worker costs a torch import, so
the submissions are graded a few files per process, to spread over the cores;
`gpt-kata grade` itself has one such worker serve all its problems in turn
(SpawnHost).

Every reference must pass on it, as it does on the forked path
(test_grading.py), graded by one `gpt-kata grade --reference` as a learner's
machine grades it. Of the learner-style submissions, those of the problems
judged by counting model calls (stream, kv-cache), where the two paths once
disagreed, must get the verdict their expected.toml gives, which is the forked
path's (test_submissions.py), and name the same mistake. Where a witness
serves a model the worker never sees (noise drawn for the grade), single checks
may differ; the verdicts may not. GPT_KATA_SPAWNED_ALL=1 grades every folder
of grader/checks/*/examples/ so (minutes: about two hundred torch imports);
GPT_KATA_SPAWN_WORKERS=1 runs the whole suite on the spawned path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_submissions import Expectation, expectations

from grader.registry import problems
from grader.sandbox.host.pool import SPAWN_VARIABLE

BATCH = 5  # files per grading process
COUNTED = {"stream", "kv-cache"}  # judged by the model calls the worker reports


def graded(jobs: list[dict], tmp_path: Path, spawned: bool) -> list[dict]:
    """Reports of `jobs`, graded by a process of their own on one path."""
    way = "spawned" if spawned else "forked"
    jobs_file, out_file = tmp_path / f"jobs-{way}.json", tmp_path / f"reports-{way}.json"
    jobs_file.write_text(json.dumps([{**j, "file": str(j["file"])} for j in jobs]))
    env = {k: v for k, v in os.environ.items() if k != SPAWN_VARIABLE}
    if spawned:
        env[SPAWN_VARIABLE] = "1"
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "grade_batch.py"),
                           str(jobs_file), str(out_file)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out_file.read_text())


REFERENCES = [p for p in problems() if p.reference.is_file()]


def test_one_process_grades_every_reference_on_the_spawned_path(tmp_path: Path) -> None:
    """`gpt-kata grade --reference` on the spawned path: every reference passes, and one
    host process serves every problem (SpawnHost), so each reference is loaded where
    others were loaded before it. A reference that fails is named with its first two
    failures."""
    env = {**os.environ, SPAWN_VARIABLE: "1"}
    out = tmp_path / "references.json"
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "--reference", "-q",
                           "--json", str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert out.is_file(), (done.stdout + done.stderr)[-3000:]
    report = json.loads(out.read_text())
    graded = {p["problem"]: p["status"] for p in report["problems"]}
    failures = {slug: [t["message"] for t in report["tests"]
                       if t["problem"] == slug and t["status"] != "pass"][:2]
                for slug, status in graded.items() if status != "pass"}
    assert graded == {p.slug: "pass" for p in REFERENCES}, failures
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]


def submission_batches() -> list[list[Expectation]]:
    everything = os.environ.get("GPT_KATA_SPAWNED_ALL") == "1"
    chosen = [e for e in expectations() if everything or e.problem in COUNTED]
    return [chosen[i:i + BATCH] for i in range(0, len(chosen), BATCH)]


SUBMISSION_BATCHES = submission_batches()


@pytest.mark.parametrize("batch", SUBMISSION_BATCHES,
                         ids=[f"{b[0].problem}-{i}" for i, b in
                              enumerate(SUBMISSION_BATCHES)])
def test_learner_style_submissions_get_their_verdicts_on_the_spawned_path(batch: list[Expectation],
                                                             tmp_path: Path) -> None:
    files = [e.materialise(tmp_path) for e in batch]
    jobs = [{"problem": e.problem, "file": f} for e, f in zip(batch, files, strict=True)]
    # expected.toml holds the forked path's verdicts (test_submissions.py).
    spawned = graded(jobs, tmp_path, spawned=True)
    for expectation, report in zip(batch, spawned, strict=True):
        failures = [t["message"] for t in report["tests"] if t["status"] != "pass"]
        assert report["status"] == ("pass" if expectation.passes else expectation.status), (
            f"{expectation.id}: {failures[:2]}")
        assert expectation.says in "\n".join(m or "" for m in failures), expectation.id
