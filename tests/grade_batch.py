"""Grade many submissions in one process, each as `gpt-kata grade --json` would.

`python tests/grade_batch.py JOBS.json OUT.json`: JOBS is a list of
{"problem": slug, "file": path, "timeout": seconds?}; OUT gets one report per
job, in the same shape as the CLI's JSON report. One process and one worker
pool serve them all, so the fixed cost of starting is paid once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from grader.grading.session import Limits, grade_problems
from grader.registry import find
from grader.sandbox.process import DEFAULT_CALL_TIMEOUT, WorkerPool


def main(jobs_file: str, out_file: str) -> None:
    jobs = json.loads(Path(jobs_file).read_text())
    reports = []
    with WorkerPool() as pool:
        for job in jobs:
            limits = Limits(call_timeout=job.get("timeout", DEFAULT_CALL_TIMEOUT))
            report = grade_problems({find(job["problem"]): Path(job["file"])}, pool, limits)
            reports.append(report.to_json())
    Path(out_file).write_text(json.dumps(reports))


if __name__ == "__main__":
    main(*sys.argv[1:3])
