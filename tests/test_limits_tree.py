"""Limits on a worker's whole process tree: memory, processes, memfd files, scratch.

Each attack runs in a sandboxed worker as grading runs it, and must fail with
the limit it reached named; afterwards nothing outside scratch has changed and
none of its processes is left (each one names itself with a token the test
then looks for in /proc).
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from grader.sandbox.host.channel import WorkerDied
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess
from grader.sandbox.wire.limits import Limits
from grader.sandbox.worker.machine import probe

MB = 1 << 20
ISO = probe()
LINUX = sys.platform.startswith("linux")

pytestmark = pytest.mark.skipif(not (LINUX and ISO.namespaces and ISO.landlock_abi),
                                reason="the sandbox needs Linux namespaces and Landlock")
needs_memory_cgroup = pytest.mark.skipif(
    not any(c.startswith("memory-cgroup") for c in ISO.cgroups),
    reason="no memory cgroup this grader may make groups in (cgroup v1 as root, or a "
           "delegated cgroup v2)")
needs_cpu_cgroup = pytest.mark.skipif(
    not any(c.startswith(("cpuacct-cgroup", "cpu-cgroup")) for c in ISO.cgroups),
    reason="no cgroup that counts CPU time this grader may make groups in")

SOLUTION = '''
import ctypes, os, time

MB = 1 << 20
TOKEN = {token!r}


def named():
    # PR_SET_NAME: the test finds what is left of this worker's tree by it.
    ctypes.CDLL(None).prctl(15, TOKEN.encode(), 0, 0, 0)


class Solution:
    def children(self, count, mb):
        """`count` children each fill `mb` MB and hold it until all have tried."""
        named()
        status_r, status_w = os.pipe()
        release_r, release_w = os.pipe()
        pids = []
        for _ in range(count):
            pid = os.fork()
            if pid == 0:
                try:
                    os.close(status_r)
                    os.close(release_w)
                    block = bytearray(mb * MB)
                    for i in range(0, len(block), 4096):
                        block[i] = 1  # touched, so the pages are really there
                    os.write(status_w, b"1")
                    os.close(status_w)
                    os.read(release_r, 1)
                finally:
                    os._exit(0)
            pids.append(pid)
        os.close(status_w)
        filled = b""
        while chunk := os.read(status_r, 64):
            filled += chunk
        os.close(release_w)
        for pid in pids:
            os.waitpid(pid, 0)
        return len(filled)

    def memfd(self, mb):
        named()
        fd = os.memfd_create("held")
        chunk = b"x" * MB
        for _ in range(mb):
            os.write(fd, chunk)
        return mb

    def processes(self, count):
        """Start `count` processes that wait; how many could start."""
        named()
        release_r, release_w = os.pipe()
        pids = []
        for _ in range(count):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                os.close(release_w)
                os.read(release_r, 1)
                os._exit(0)
            pids.append(pid)
        os.close(release_w)
        for pid in pids:
            os.waitpid(pid, 0)
        return len(pids)

    def scratch(self, files, mb):
        """Write `files` files of `mb` MB each into the working folder (scratch)."""
        named()
        chunk = b"x" * MB
        written = 0
        try:
            for n in range(files):
                with open(f"file-{{n}}", "wb") as handle:
                    for _ in range(mb):
                        handle.write(chunk)
                        handle.flush()
                        written += 1
        except OSError as exc:
            raise OSError(exc.errno, f"{{written}} MB written") from None
        return written

    def stream_children(self, count, mb):
        """A stream whose second item is made by `count` children of `mb` MB each."""
        yield "started"
        yield self.children(count, mb)

    def stream_processes(self, count):
        yield "started"
        yield self.processes(count)

    def spin(self, count, seconds):
        """`count` children each spin for `seconds` of their own CPU time."""
        named()
        pids = []
        for _ in range(count):
            pid = os.fork()
            if pid == 0:
                while time.process_time() < seconds:  # a child's clock starts at 0
                    pass
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        return len(pids)

    def leave_one(self):
        """A process in a session of its own that would outlive the call."""
        named()
        if os.fork() == 0:
            os.setsid()
            time.sleep(600)
            os._exit(0)
        return "left"
'''

METHODS = ["children", "memfd", "processes", "scratch", "leave_one", "stream_children",
           "stream_processes", "spin"]


def left_behind(token: str) -> list[int]:
    """Processes of this test's worker still running anywhere on the machine.

    A zombie has exited already (its parent, in a namespace being torn down,
    has not reaped it yet): it runs nothing and holds no memory.
    """
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                status = Path(f"/proc/{entry}/status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
            if fields.get("Name", "").strip() == token[:15] \
                    and not fields.get("State", "").startswith("Z"):
                found.append(int(entry))
    return found


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*")}


class Graded:
    """One submission graded in a sandbox of its own."""

    def __init__(self, folder: Path, sandbox: Limits) -> None:
        self.token = "kata" + uuid.uuid4().hex[:11]
        self.folder = folder
        (folder / "solution.py").write_text(SOLUTION.format(token=self.token))
        self.before = snapshot(folder)
        self.pool = WorkerPool(sandbox=sandbox)
        self.process = SubmissionProcess(str(folder / "solution.py"), "Solution", METHODS,
                                         self.pool, Limits(call_timeout=300, problem_budget=600))

    def call(self, method: str, *args: object) -> tuple[object, str]:
        outcome = self.process.call(method, args)
        return outcome.result, (outcome.error or {}).get("message") or ""

    def stream(self, method: str, *args: object) -> tuple[list[object], str]:
        """The items a generator method streamed, and the error that ended it."""
        items: list[object] = []
        try:
            items.extend(self.process.iterate(method, args))
        except (RuntimeError, WorkerDied) as exc:
            return items, str(exc)
        return items, ""

    def close(self) -> None:
        self.process.close()
        self.pool.close()


@pytest.fixture
def grade(tmp_path: Path) -> Iterator[callable]:
    made: list[Graded] = []

    def start(**sandbox: int) -> Graded:
        folder = tmp_path / "learner"
        folder.mkdir()
        made.append(Graded(folder, Limits(**sandbox)))
        return made[-1]

    yield start
    for graded in made:
        graded.close()
        # Nothing outside scratch changed, and nothing of the worker's tree is left.
        assert snapshot(graded.folder) == graded.before
        assert left_behind(graded.token) == []


@needs_memory_cgroup
def test_eight_children_share_one_memory_limit(grade) -> None:
    graded = grade(memory_bytes=200 * MB)
    # 190 MB each: below the 200 MB that RLIMIT_DATA gives each process alone.
    filled, message = graded.call("children", 8, 190)
    assert "the memory limit (200 MB" in message, message
    assert "together" in message


@needs_memory_cgroup
def test_a_tree_within_the_limit_runs(grade) -> None:
    """The limit is on the tree, not a token one: two children of 50 MB pass."""
    graded = grade(memory_bytes=200 * MB)
    assert graded.call("children", 2, 50) == (2, "")


@pytest.mark.skipif(not ISO.seccomp, reason="no seccomp filter for this machine")
def test_memfd_files_cannot_be_made(grade) -> None:
    graded = grade(memory_bytes=200 * MB)
    result, message = graded.call("memfd", 1024)
    assert result is None and "Operation not permitted" in message, message


@pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root in this check")
def test_as_root_processes_reach_the_limit(grade) -> None:
    graded = grade()
    started, message = graded.call("processes", 200)
    assert "the process limit (16" in message, message
    assert isinstance(started, int) and started <= 16


@needs_memory_cgroup
def test_a_stream_whose_children_reach_the_memory_limit_fails_naming_it(grade) -> None:
    graded = grade(memory_bytes=200 * MB)
    items, message = graded.stream("stream_children", 8, 190)
    assert "the memory limit (200 MB" in message, (items, message)


@pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root in this check")
def test_a_stream_that_reaches_the_process_limit_fails_naming_it(grade) -> None:
    graded = grade()
    items, message = graded.stream("stream_processes", 200)
    assert "the process limit (16" in message, (items, message)
    assert items == ["started"]  # the item made with processes missing is not passed on


def test_a_stream_within_the_limits_runs(grade) -> None:
    graded = grade(memory_bytes=200 * MB)
    assert graded.stream("stream_children", 2, 10) == (["started", 2], "")


@needs_cpu_cgroup
def test_eight_spinning_children_share_one_cpu_limit(grade) -> None:
    graded = grade(cpu_seconds=2)
    # 1.5 s each: below the 2 s that RLIMIT_CPU gives each process alone, 12 s together.
    result, message = graded.call("spin", 8, 1.5)
    assert result is None, result
    assert "the CPU time limit (2 s" in message and "together" in message, message


@needs_cpu_cgroup
def test_children_within_the_cpu_limit_run(grade) -> None:
    graded = grade(cpu_seconds=2)
    assert graded.call("spin", 2, 0.2) == (2, "")


def test_scratch_writes_stop_at_the_tmpfs_size(grade) -> None:
    graded = grade(scratch_bytes=8 * MB)
    _result, message = graded.call("scratch", 4, 4)
    assert "the scratch folder's size limit (8 MB) was reached" in message, message
    written = int(re.search(r"(\d+) MB written", message).group(1))
    assert written <= 8
    worker = graded.process._worker
    # The files were in the worker's own tmpfs: the grader's folder stays empty.
    assert worker is not None and worker.scratch and os.listdir(worker.scratch) == []


def test_scratch_has_a_size_limit_by_default(grade) -> None:
    graded = grade()
    _result, message = graded.call("scratch", 3, 30)
    assert "the scratch folder's size limit (64 MB) was reached" in message, message


def test_a_process_left_running_is_ended_with_the_worker(grade) -> None:
    graded = grade()
    assert graded.call("leave_one") == ("left", "")
    assert left_behind(graded.token)  # running until the worker ends; the fixture checks


def v1_cpu_controller() -> bool:
    """Whether cgroup v1's cpu controller is mounted where root may make groups."""
    from grader.sandbox.worker.layers.cgroups import _mounts

    return LINUX and os.geteuid() == 0 and any(
        kind == "cgroup" and "cpu" in options for _root, _point, kind, options in _mounts())


@pytest.mark.skipif(not v1_cpu_controller(), reason="no cgroup v1 cpu controller, as root")
def test_a_trees_processes_share_the_cpu_as_one_whatever_their_session(grade) -> None:
    """A process of the worker's tree in a session of its own is still weighed in the
    worker's cpu group, not by the kernel's autogroup as a session apart: a learner's
    dozen busy processes then take one worker's share of the CPU, not a dozen."""
    graded = grade()
    assert graded.call("leave_one") == ("left", "")
    left = left_behind(graded.token)
    assert left
    for pid in left:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
        cpu = [line.split(":", 2)[2] for line in lines if "cpu" in line.split(":")[1].split(",")]
        assert cpu and "gpt-kata-" in cpu[0], lines


def test_the_report_lists_the_tree_layers_that_ran(grade) -> None:
    graded = grade()
    assert graded.call("children", 1, 1) == (1, "")
    layers = graded.pool.layers
    ran = [*ISO.cgroups, *(["unprivileged-uid"] if ISO.unprivileged_uid else []),
           "scratch-tmpfs"]
    assert set(ran) <= set(layers), layers
    missing = [layer for layer in layers if layer.startswith("missing:")]
    assert missing == ([f"missing:{','.join(ISO.missing())}"] if ISO.missing() else [])
    assert "worker-pid-namespace" in layers  # the last name, still within what is kept


def test_the_report_names_a_missing_cgroup(grade, monkeypatch: pytest.MonkeyPatch) -> None:
    from grader.sandbox.worker import machine
    from grader.sandbox.worker.layers.cgroups import TreeLimits

    def without_groups(memory_bytes: int | None, scratch_bytes: int | None = None,
                       **_: object) -> TreeLimits:
        return TreeLimits(memory_bytes, 16, extra={"scratch_bytes": scratch_bytes})

    monkeypatch.setattr(machine, "worker_limits", without_groups)
    graded = grade()
    assert graded.call("children", 1, 1) == (1, "")
    missing = [layer for layer in graded.pool.layers if layer.startswith("missing:")]
    assert missing and missing[0].startswith("missing:memory-cgroup,pids-cgroup"), missing
