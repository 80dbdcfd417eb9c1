"""Grade many submissions in one process, each as `gpt-kata grade --json` would.

`python tests/grade_batch.py JOBS.json OUT.json`: JOBS is a list of
{"problem": slug, "file": path, "timeout": seconds?}; OUT gets one report per
job, in the same shape as the CLI's JSON report.

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


def grade_all(jobs: list[dict], pool: WorkerPool) -> list[dict]:
    reports = []
    for job in jobs:
        limits = Limits(call_timeout=job.get("timeout", DEFAULT_CALL_TIMEOUT))
        report = grade_problems({find(job["problem"]): Path(job["file"])}, pool, limits)
        reports.append(report.to_json())
    return reports


def main(jobs_file: str, out_file: str) -> None:
    jobs = json.loads(Path(jobs_file).read_text())
    with WorkerPool() as pool:
        Path(out_file).write_text(json.dumps(grade_all(jobs, pool)))


def serve() -> None:
    # Replies go over a copy of stdout; the real one points at stderr, so that
    # nothing else printed can be taken for a reply.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    with WorkerPool() as pool:
        for line in sys.stdin:
            replies.write(json.dumps(grade_all(json.loads(line), pool)) + "\n")
            replies.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main(*sys.argv[1:3])
