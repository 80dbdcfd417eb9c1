"""A fork server stopped from outside the sandbox makes no grade, not a failing one.

As root the fork server runs with the real uid 65534, so any process of that uid on
the grading machine can stop it. The learner's code cannot, but the grade it then got
blamed the code: "loading failed: the fork server stopped answering", scored 0. Now
the run is the grader's error, with no problem reported as failed.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the fork server runs on Linux only")

# Seconds: a grade under --timeout 5 --budget 10 ends well within a minute, even
# when the processes it would end are stopped; only one that would never end
# gets near this.
HANG_GUARD = 300


def parents() -> dict[int, int]:
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            found[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            pass  # a process that ended meanwhile
    return found


def is_server(pid: int) -> bool:
    """A Python of the fork server's command line (not the unshare that starts it)."""
    try:
        line = Path(f"/proc/{pid}/cmdline").read_bytes()
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return False
    return b"grader.sandbox.host.forkserver" in line and comm.startswith("python")


def the_server(grade: int) -> int | None:
    """The grade's fork server: its descendant of that command line whose parent is
    not one (the workers it forks keep its command line)."""
    tree, below, frontier = parents(), [], [grade]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in tree.items() if ppid == parent]
        below += children
        frontier += children
    servers = [pid for pid in below if is_server(pid) and not is_server(tree.get(pid, 0))]
    return servers[0] if len(servers) == 1 else None


def named(mark: str) -> bool:
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == mark:
                return True
        except OSError:
            pass
    return False


def below(grade: int) -> list[int]:
    """Every process the grade started, and what they started: the launcher, the fork
    server, its workers."""
    tree, found, frontier = parents(), [], [grade]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in tree.items() if ppid == parent]
        found += children
        frontier += children
    return found


def grade_stopping(tmp_path: Path, what: str) -> tuple[dict, bytes, int, list[int]]:
    """Grade a crop-context whose call waits; once it runs, SIGSTOP the fork server
    (`what` = "server") or every process below the grade ("all"), and let the call
    go on, which a stopped process cannot. The report, stderr, exit code and what
    was stopped."""
    folder = tmp_path / "problems" / "01-crop-context"
    folder.mkdir(parents=True)
    mark, go = f"kata{secrets.token_hex(5)}", folder / "go"
    # The call says it runs (its process name, read in /proc from outside the
    # sandbox), waits until the server is stopped, then crashes: the next check needs
    # a new worker, which only the stopped server could fork.
    (folder / "solution.py").write_text(
        "import ctypes, os, time\n"
        "class Solution:\n    def crop_context(self, context, n):\n"
        f"        ctypes.CDLL(None).prctl(15, b'{mark}', 0, 0, 0)\n"
        f"        while not os.path.exists({str(go)!r}):\n            time.sleep(0.05)\n"
        "        os._exit(3)\n")
    report = tmp_path / "report.json"
    (tmp_path / "tmp").mkdir()  # the grade's temporary folder: its scratch goes there
    grade = subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", "--classroom", "--allow-unisolated",
         "--submission", str(tmp_path / "problems"), "--json", str(report), "-q",
         "--timeout", "5", "--budget", "10", "crop-context"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    stopped: list[int] = []

    def stop_once_the_call_runs() -> None:
        while grade.poll() is None:
            server = the_server(grade.pid) if named(mark) else None
            if server is not None:
                for pid in [server] if what == "server" else below(grade.pid):
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append(pid)
                go.write_text("")
                return
            threading.Event().wait(0.05)

    stopper = threading.Thread(target=stop_once_the_call_runs)
    stopper.start()
    try:
        _, stderr = grade.communicate(timeout=HANG_GUARD)
    finally:
        if grade.poll() is None:
            grade.kill()
        stopper.join()
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
    assert stopped, "the learner's call never started, or no fork server was found"
    return json.loads(report.read_text()), stderr, grade.returncode, stopped


def test_a_fork_server_stopped_mid_grade_is_the_graders_error(tmp_path: Path) -> None:
    data, stderr, code, _ = grade_stopping(tmp_path, "server")
    assert data["status"] == "error", ([t["message"] for t in data["tests"]], stderr)
    assert "fork server stopped answering during this grade" in data["message"]
    assert data["problems"] == [] and data["tests"] == []
    assert code == 1


def test_the_whole_sandbox_stopped_mid_grade_ends_the_grade(tmp_path: Path) -> None:
    """The launcher, the fork server and the worker all stopped: none of them can end
    the worker, whose channel and witness then never close. The grade still ends, as
    the grader's error, and leaves no scratch folder behind."""
    data, stderr, code, stopped = grade_stopping(tmp_path, "all")
    assert len(stopped) >= 3, stopped  # launcher, server, worker (and the worker's parent)
    assert data["status"] == "error", ([t["message"] for t in data["tests"]], stderr)
    assert "fork server stopped answering during this grade" in data["message"]
    assert code == 1
    assert list((tmp_path / "tmp").iterdir()) == []
