"""Grade many submissions in one process, each as `gpt-kata grade --json` would.

`python tests/grade_batch.py JOBS.json OUT.json`: JOBS is a list of
{"problem": slug, "file": path, "timeout": seconds?, "sandbox": bool?, "mode": str?},
or of {"files": {slug: path, ...}, ...} for one report of several problems; OUT
gets one report per job, in the same shape as the CLI's JSON report. A job with
"sandbox" is graded under every layer of the sandbox, as `gpt-kata grade` grades;
the others without it (the learner-style submissions: only their grade matters).
A job of "mode" "classroom" is scored as `gpt-kata grade --classroom` scores it: a
problem's fixed cases and other checks count only once its drawn examples pass.

`python tests/grade_batch.py --serve`: the same, for batch after batch. Each
line on stdin is a JOBS list; each line written back is its reports. One
process and one worker pool serve every batch a test process sends, so torch
is imported once per test process rather than once per batch.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from grader.grading.engine.session import grade_problems
from grader.registry import find
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.wire.limits import DEFAULT_CALL_TIMEOUT, Limits


class Pools:
    """A pool without the sandbox and one with it, each started on first use (each has
    a fork server of its own, which imports torch)."""

    def __init__(self) -> None:
        self.started: dict[bool, WorkerPool] = {}

    def __getitem__(self, sandboxed: bool) -> WorkerPool:
        if sandboxed not in self.started:
            # The sandbox's limits as `gpt-kata grade` sets them by default.
            self.started[sandboxed] = WorkerPool(sandbox=Limits() if sandboxed else None)
        return self.started[sandboxed]

    def close(self) -> None:
        for pool in self.started.values():
            pool.close()


def grade_all(jobs: list[dict], pools: Pools) -> list[dict]:
    reports = []
    for job in jobs:
        limits = Limits(call_timeout=job.get("timeout", DEFAULT_CALL_TIMEOUT))
        files = job.get("files") or {job["problem"]: job["file"]}
        report = grade_problems({find(slug): Path(file) for slug, file in files.items()},
                                pools[bool(job.get("sandbox"))], limits)
        # What `--classroom` changes in a report of a sandboxed grade: its mode, by which
        # it is scored (grader/learner/grade.py sets it the same way).
        report.mode = job.get("mode", "practice")
        reports.append(report.to_json())
    return reports


def main(jobs_file: str, out_file: str) -> None:
    jobs = json.loads(Path(jobs_file).read_text())
    pools = Pools()
    try:
        Path(out_file).write_text(json.dumps(grade_all(jobs, pools)))
    finally:
        pools.close()


def serve() -> None:
    # Replies go over a copy of stdout; the real one points at stderr, so that
    # nothing else printed can be taken for a reply.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    pools = Pools()
    try:
        for line in sys.stdin:
            replies.write(json.dumps(grade_all(json.loads(line), pools)) + "\n")
            replies.flush()
    finally:
        pools.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main(*sys.argv[1:3])
