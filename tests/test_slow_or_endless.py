"""A call that gives no answer in time is told apart by what was measured: the CPU
time the worker used while the grader waited, and how busy the machine was
(grader/sandbox/host/slow_or_endless.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import run_grade

from grader.sandbox.host.slow_or_endless import no_answer, starved


def test_the_message_goes_by_the_share_of_a_core_and_the_load() -> None:
    computing = no_answer(10, 9.6, 10.0, load=3.0)
    assert computing.startswith("no answer within 10 seconds: it computed the whole time")
    assert "9.6 s of CPU in 10.0 s" in computing and "endless loop" in computing
    busy = no_answer(10, 2.5, 10.0, load=2.4)
    assert "whenever the busy machine let it (2.5 s of CPU in 10.0 s, load 2.4 per core)" \
        in busy and "--timeout 20" in busy
    waiting = no_answer(10, 0.02, 10.0, load=0.3)
    assert "waiting, not computing" in waiting and "input(), a sleep or a lock" in waiting
    # Without a measure (no cgroup, no process to ask), nothing is claimed.
    assert no_answer(10, None, 10.0, load=0.3) == (
        "no answer within 10 seconds (an endless loop, or far slower than needed?)")
    # A quiet machine that cannot tell its load: a small share is waiting.
    assert "waiting" in no_answer(5, 0.1, 5.0, load=None)
    # On a busy machine, next to no CPU is a wait, not slowness ("give it more time"
    # would send the learner the wrong way); a share of what the machine gives cannot
    # tell a loop from slow code, so both are said, with more time to try.
    sleeping = no_answer(20, 0.0, 20.0, load=2.5)
    assert "waiting, not computing" in sleeping and "--timeout" not in sleeping
    assert "quiet" not in sleeping
    computing = no_answer(20, 12.4, 20.0, load=2.6)
    assert "an endless loop, or code that is only slow here and now" in computing
    assert "--timeout 40" in computing


def cpu_said(message: str) -> float | None:
    found = re.search(r"(\d+\.\d) s of CPU in (\d+\.\d) s", message)
    return float(found[1]) if found else None


def test_a_loop_and_a_wait_are_measured_apart(tmp_path: Path) -> None:
    loop = tmp_path / "loop.py"
    loop.write_text("class Solution:\n    def crop_context(self, *args):\n"
                    "        while True:\n            pass\n")
    wait = tmp_path / "wait.py"
    wait.write_text("import time\n\nclass Solution:\n    def crop_context(self, *args):\n"
                    "        time.sleep(600)\n")
    # As a learner grades: the sandbox's cgroup accounts the worker's CPU time.
    looped, waited = (run_grade("crop-context", "--submission", file, "--timeout", "2",
                                tmp_path=tmp_path).messages() for file in (loop, wait))
    assert "no answer within 2 seconds" in looped and "no answer within 2 seconds" in waited
    spun, slept = cpu_said(looped), cpu_said(waited)
    if spun is None or slept is None:
        pytest.skip("this machine cannot tell a worker's CPU time (no cgroup cpuacct)")
    # However busy the machine, a loop gets some of a core, and a sleep none of it.
    assert slept < 0.2 < spun, (looped, waited)
    assert "blocked on input()" in waited or "busy machine" in waited


def test_a_spawned_workers_tree_is_measured_with_its_children() -> None:
    import subprocess
    import sys
    import time

    import psutil

    from grader.sandbox.host.slow_or_endless import process_tree_cpu

    # A parent that waits on a child that spins: the CPU is the child's. The tree is
    # read once the child has used 0.2 s by its own account, which on a loaded machine
    # takes longer than on a quiet one: the test waits for the work, not for a time.
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys; subprocess.run([sys.executable, '-c', 'while True: pass'])")])
    try:
        child_cpu = 0.0
        for _ in range(6000):
            children = psutil.Process(parent.pid).children()
            if children:
                times = children[0].cpu_times()
                child_cpu = times.user + times.system
                if child_cpu > 0.2:
                    break
            time.sleep(0.01)
        used = process_tree_cpu(parent.pid)
    finally:
        for child in psutil.Process(parent.pid).children(recursive=True):
            child.kill()
        parent.kill()
        parent.wait()
    assert child_cpu > 0.2, child_cpu
    assert used is not None and used >= child_cpu, (used, child_cpu)
    assert process_tree_cpu(parent.pid) is None  # gone: nothing to ask


def test_the_load_comes_from_psutil_where_the_system_has_no_load_average(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows has no os.getloadavg: psutil samples a load there, so a time-out on a
    busy Windows machine can be `busy` too; anything psutil cannot tell is no load."""
    import os

    import psutil

    from grader.sandbox.host.slow_or_endless import machine_load

    monkeypatch.delattr(os, "getloadavg", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(psutil, "getloadavg", lambda: (6.0, 5.0, 4.0))
    assert machine_load() == 1.5

    def refused() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(psutil, "getloadavg", refused)
    assert machine_load() is None


def test_starved_is_a_share_in_between_on_a_busy_machine() -> None:
    """What a gradebook grades again: a time-out the busy machine may have caused."""
    assert starved(2.5, 10.0, load=2.4)  # it computed whenever the machine let it
    assert not starved(9.6, 10.0, load=3.0)  # it computed the whole time
    assert not starved(0.02, 10.0, load=3.0)  # it waited
    assert not starved(2.5, 10.0, load=0.3)  # a quiet machine: it waited
    assert not starved(2.5, 10.0, load=None)  # no load to go by: the time-out stands
    assert starved(None, 10.0, load=2.0)  # not measured, on a busy machine
    assert not starved(None, 10.0, load=0.5)


# Computes for 20 ms and sleeps for 30 ms, over and over; or only sleeps.
PART_TIME = """
import time


class Solution:
    def part_time(self):
        while True:
            end = time.monotonic() + 0.02
            while time.monotonic() < end:
                pass
            time.sleep(0.03)

    def sleeps(self):
        time.sleep(600)
"""


@pytest.mark.parametrize("fork", [
    pytest.param(True, marks=pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                reason="forked workers: Linux")),
    False], ids=["forked", "spawned"])
def test_a_time_out_that_computed_on_a_busy_machine_is_marked_busy(tmp_path: Path,
                                                                   monkeypatch,
                                                                   fork: bool) -> None:
    """On either path: the spawned one's host serves the grade's problems in turn, and
    its tree's CPU time is the tenant's."""
    from grader.sandbox.host import handles
    from grader.sandbox.host.pool import WorkerPool
    from grader.sandbox.host.process import SubmissionProcess
    from grader.sandbox.wire.limits import Limits

    monkeypatch.setattr(handles, "machine_load", lambda: 4.0)
    solution = tmp_path / "solution.py"
    solution.write_text(PART_TIME, encoding="utf-8")
    outcomes = {}
    with WorkerPool(fork=fork, sandbox=Limits()) as pool:
        for method in ("part_time", "sleeps"):
            process = SubmissionProcess(str(solution), "Solution", ["part_time", "sleeps"],
                                        pool, Limits(call_timeout=2.0))
            pool.prepare([process.load_spec])  # as a grade does: the spawned path's host
            error = process.call(method, ()).error
            assert error is not None and error["type"] == "WorkerDied", error
            assert process.timed_out and process.timed_out_busy == error.get("busy", False)
            outcomes[method] = error
    measured = cpu_said(outcomes["sleeps"]["message"]) is not None
    # A spawned worker's tree is measured by psutil wherever it runs; a forked one's by
    # its cgroup, which a machine may not offer.
    assert measured or fork, outcomes["sleeps"]
    if not measured:
        # Where the tree's CPU cannot be read, a busy machine may be why, either way.
        assert outcomes["sleeps"].get("busy") is True
    else:
        # A wait is a wait however busy the machine: its time-out is final.
        assert "busy" not in outcomes["sleeps"], outcomes["sleeps"]
    assert outcomes["part_time"].get("busy") is True, outcomes["part_time"]


def test_a_busy_time_out_fails_its_check_and_the_next_as_busy() -> None:
    from grader.grading.subject.kata import Kata
    from grader.grading.values.failures import BUSY, STUCK, GradeFailure
    from grader.registry import find
    from grader.sandbox.host.process import CallOutcome

    class TimesOut:
        load_error = None

        def __init__(self, busy: bool) -> None:
            self.error = {"type": "WorkerDied", "message": "no answer within 2 seconds"}
            if busy:
                self.error["busy"] = True

        def call(self, *args, **kwargs) -> CallOutcome:
            return CallOutcome(error=dict(self.error))

    for busy, kind in ((True, BUSY), (False, STUCK)):
        kata = Kata(find("crop-context"), TimesOut(busy), reference=None)
        for _ in range(2):  # the call that timed out, then a later one of the check
            with pytest.raises(GradeFailure) as failed:
                kata.outcome("crop_context")
            assert failed.value.kind == kind


# Its import computes part of the time, and never ends.
LOADS_PART_TIME = """
import time

while True:
    end = time.monotonic() + 0.02
    while time.monotonic() < end:
        pass
    time.sleep(0.03)


class Solution:
    def part_time(self):
        return 1
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers: Linux")
def test_a_load_out_of_time_on_a_busy_machine_is_busy(tmp_path: Path, monkeypatch) -> None:
    from grader.grading.values.failures import BUSY, UNAVAILABLE
    from grader.grading.values.worker_errors import unavailable_kind
    from grader.sandbox.host import handles, process
    from grader.sandbox.host.pool import WorkerPool
    from grader.sandbox.wire.limits import Limits

    monkeypatch.setattr(handles, "machine_load", lambda: 4.0)
    monkeypatch.setattr(process, "LOAD_TIMEOUT", 2.0)
    solution = tmp_path / "solution.py"
    solution.write_text(LOADS_PART_TIME, encoding="utf-8")
    with WorkerPool(sandbox=Limits()) as pool:
        error = process.SubmissionProcess(str(solution), "Solution", ["part_time"],
                                          pool).load()
    assert error is not None and error["type"] == "LoadFailed", error
    if cpu_said(error["message"]) is not None:  # measured: it computed part of the time
        assert error.get("busy") is True, error
        assert unavailable_kind(error) == BUSY
    assert unavailable_kind({**error, "busy": False}) == UNAVAILABLE
