"""A worker that stops reading is a time-out, and a grade ended from outside leaves no scratch.

The submission makes its worker's next read of the grader's requests wait for
ever (the channel kept open, never read); the request that follows is larger
than a pipe or socket holds, so without a deadline the grader's write would
wait for ever. The test bounds each call with a join of its own, many times the
limit, so that a hang fails instead of stalling the suite.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from grader import paths
from grader.classroom.gradebook.grade_process import GradeProcess
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess
from grader.sandbox.wire.limits import Limits

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="SIGSTOP, and the fork server's scratch, are POSIX/Linux")

HANG_GUARD = 300.0  # seconds: only a call that would never return gets near it
BIG = "x" * 900_000  # more than a pipe or socket buffer holds, less than a str may be

STOPS_READING = '''
import os, socket, sys, time

KEPT = []


class Solution:
    def stop_reading(self):
        # The worker's own reader of the grader's requests, from the frame that serves them.
        frame = sys._getframe()
        while "proto_in" not in frame.f_locals:
            frame = frame.f_back
        reader = frame.f_locals["proto_in"]
        if isinstance(reader.raw, socket.SocketIO):
            # A fork server's worker: its next read sleeps for ever.
            socket.SocketIO.readinto = lambda self, buffer: time.sleep(10**6)
        else:
            # A spawned worker's pipe: kept open, and never read again.
            fd = reader.fileno()
            KEPT.append(os.dup(fd))
            empty, writer = os.pipe()
            KEPT.append(writer)
            os.dup2(empty, fd)
        return 1

    def size(self, text):
        return len(text)
'''


SLEEPS = '''
import time


class Solution:
    def crop_context(self, context, context_length):
        time.sleep(10_000)
'''
# A training problem's worker, forked by the server that trains (a second server,
# with a scratch root of its own).
TRAINING_SLEEPS = '''
import time


class Solution:
    def train_step(self, *args, **kwargs):
        time.sleep(10_000)
'''


def bounded(function):
    """function()'s value; fails the test if it has not returned within HANG_GUARD."""
    box: list = []
    thread = threading.Thread(target=lambda: box.append(function()), daemon=True)
    thread.start()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), "the grader hung writing to a worker that stopped reading"
    return box[0]


@pytest.mark.parametrize("fork", [True, False], ids=["forked", "spawned"])
@pytest.mark.parametrize("limit", ["timeout", "budget"])
def test_a_worker_that_stops_reading_is_a_time_out(tmp_path: Path, fork: bool,
                                                   limit: str) -> None:
    submission = tmp_path / "solution.py"
    submission.write_text(STOPS_READING, encoding="utf-8")
    limits = (Limits(call_timeout=3.0) if limit == "timeout"
              else Limits(call_timeout=60.0, problem_budget=3.0))
    with WorkerPool(fork=fork, sandbox=Limits()) as pool:
        process = SubmissionProcess(str(submission), "Solution", ["stop_reading", "size"],
                                    pool, limits)
        assert process.call("stop_reading", ()).result == 1
        outcome = bounded(lambda: process.call("size", (BIG,)))
        assert outcome.error is not None and outcome.error["type"] == "WorkerDied"
        assert process.timed_out
        assert (("read nothing of what the grader sent" if limit == "timeout"
                 else "the time budget for this problem") in outcome.error["message"])


def walked(folder: Path) -> list[Path]:
    """Everything below `folder`, read while the grader may be removing it (os.walk
    passes over a folder gone meanwhile, where Path.rglob raises)."""
    return [Path(top, name) for top, folders, files in os.walk(folder)
            for name in (*folders, *files)]


def leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in walked(folder))


def a_worker_started(temporary: Path) -> bool:
    """Whether a worker's scratch folder exists (however the grader names it)."""
    return any(p.name.startswith("worker-") or "scratch" in p.name
               for p in walked(temporary))


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def sleeping_kata(tmp_path: Path, folder: str = "01-crop-context",
                  solution: str = SLEEPS) -> Path:
    problems = tmp_path / "kata" / "problems"
    (problems / folder).mkdir(parents=True)
    (problems / folder / "solution.py").write_text(solution, encoding="utf-8")
    return problems


@pytest.mark.parametrize("slug", ["crop-context", "train-step"])
def test_a_grade_killed_from_outside_leaves_no_scratch(tmp_path: Path, slug: str) -> None:
    problems = (sleeping_kata(tmp_path) if slug == "crop-context"
                else sleeping_kata(tmp_path, "25-train-step", TRAINING_SLEEPS))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    grade = subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", "--classroom", "--submission", str(problems),
         slug, "--json", str(tmp_path / "report.json")],
        cwd=paths.PACKAGE.parent, env={**os.environ, "TMPDIR": str(temporary)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: a_worker_started(temporary), "a worker's scratch folder")
    finally:
        grade.send_signal(signal.SIGKILL)  # no handler, no finally: only the grade dies
        grade.wait()
    wait_for(lambda: not leftovers(temporary), f"scratch removed: {leftovers(temporary)}")


def test_a_gradebook_grade_it_ends_leaves_no_scratch(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    problems = sleeping_kata(tmp_path)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    process = GradeProcess(["--classroom", "--submission", str(problems), "crop-context",
                            "--json", str(tmp_path / "report.json")],
                           str(tmp_path / "stderr.txt"))
    try:
        wait_for(lambda: a_worker_started(temporary), "a worker's scratch folder")
        assert process.wait(0) is None  # still grading
    finally:
        process.kill()
    wait_for(lambda: not leftovers(temporary), f"scratch removed: {leftovers(temporary)}")
