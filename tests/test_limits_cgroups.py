"""The cgroup layer's files, for cgroup v1 and v2, on folders laid out like a hierarchy.

No kernel is needed: a group is a folder, its limits and counters are files. On
a machine whose cgroups this grader may write, `test_limits_tree.py` checks the
real thing; cgroup v2 is checked only here where no subtree is delegated.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from grader.sandbox.worker.layers import cgroups
from grader.sandbox.worker.layers.cgroups import (
    ALLOWANCE,
    MB,
    Hierarchy,
    TreeLimits,
    with_limit_named,
)


def made(base: Path) -> Path:
    (group,) = [p for p in base.iterdir() if p.name.startswith("gpt-kata-")]
    return group


def test_v1_groups_get_their_limits_and_name_what_was_reached(tmp_path: Path) -> None:
    memory, pids = tmp_path / "memory", tmp_path / "pids"
    memory.mkdir()
    pids.mkdir()
    where = [Hierarchy(1, ("memory",), str(memory)), Hierarchy(1, ("pids",), str(pids))]
    limits = TreeLimits.create(200 * MB, 16, where)
    group_m, group_p = made(memory), made(pids)
    assert int((group_m / "memory.limit_in_bytes").read_text()) == 200 * MB + ALLOWANCE
    assert (group_p / "pids.max").read_text() == "17"  # the worker itself, and 16 more
    assert limits.request() == {"cgroups": {"memory-cgroup-v1": str(group_m),
                                            "pids-cgroup-v1": str(group_p)}}
    (group_m / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    (group_p / "pids.events").write_text("max 0\n")
    assert limits.reached() is None
    (group_m / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
    reached = limits.reached()
    assert reached is not None and "the memory limit (200 MB" in reached
    assert limits.reached() is None  # each event is named once
    (group_p / "pids.events").write_text("max 3\n")
    assert "the process limit (16" in (limits.reached() or "")


def test_v2_group_gets_both_limits_in_one_folder(tmp_path: Path) -> None:
    limits = TreeLimits.create(100 * MB, 8, [Hierarchy(2, ("memory", "pids"), str(tmp_path))])
    group = made(tmp_path)
    assert int((group / "memory.max").read_text()) == 100 * MB + ALLOWANCE
    assert (group / "pids.max").read_text() == "9"
    assert limits.request()["cgroups"] == {"memory-cgroup-v2": str(group),
                                           "pids-cgroup-v2": str(group)}
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n")
    (group / "pids.events").write_text("max 0\n")
    assert "the memory limit (100 MB" in (limits.reached() or "")


def test_a_call_that_reached_a_limit_fails_naming_it(tmp_path: Path) -> None:
    limits = TreeLimits.create(50 * MB, 16, [Hierarchy(1, ("memory",), str(tmp_path))])
    events = made(tmp_path) / "memory.oom_control"
    events.write_text("oom_kill 0\n")
    assert with_limit_named(None, limits) is None
    events.write_text("oom_kill 1\n")
    error = with_limit_named(None, limits)
    assert error is not None and error["type"] == "LimitReached"
    events.write_text("oom_kill 2\n")
    died = with_limit_named({"type": "WorkerDied", "message": "killed by signal 9"}, limits)
    assert died is not None and died["message"].startswith("the memory limit (50 MB")
    assert "killed by signal 9" in died["message"]


def test_groups_of_a_grader_that_is_gone_are_removed(tmp_path: Path) -> None:
    gone = tmp_path / "gpt-kata-999999999-0"  # no such process
    mine = tmp_path / "gpt-kata-1-0"  # init: running
    gone.mkdir()
    mine.mkdir()
    cgroups._remove_stale(str(tmp_path))
    assert not gone.exists() and mine.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups are Linux's")
def test_a_process_exists_as_psutil_says(tmp_path: Path) -> None:
    """The check that keeps a live grader's groups tells processes as psutil.pid_exists
    does: this one and init exist, a thread of this one (an id kill() answers to) and a
    number no process has do not."""
    import psutil

    started, done = threading.Event(), threading.Event()
    thread_ids: list[int] = []

    def wait() -> None:
        thread_ids.append(threading.get_native_id())
        started.set()
        done.wait()

    thread = threading.Thread(target=wait)
    thread.start()
    started.wait()
    try:
        for pid in (os.getpid(), 1, thread_ids[0], 999_999_999, 0, -1):
            assert cgroups._process_exists(pid) == psutil.pid_exists(pid), pid
        assert not cgroups._process_exists(thread_ids[0])
    finally:
        done.set()
        thread.join()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a launcher is Linux's")
def test_the_fork_servers_launcher_is_found_without_probing_the_cgroups() -> None:
    """A grade's fork server starts once the launcher is found: the cgroups are probed
    later, for the first worker's limits, while the server imports torch, and psutil is
    not imported at all (40 ms of every grade, before the server could start)."""
    code = ("import sys\n"
            "from grader.sandbox.worker.layers import cgroups\n"
            "from grader.sandbox.worker.machine import launcher_prefix, probe\n"
            "prefix = launcher_prefix()\n"
            "print(cgroups.hierarchies.cache_info().currsize, 'psutil' in sys.modules)\n"
            "assert prefix == list(probe().launcher)\n"
            "print('psutil' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "False", "False"], done.stdout


def test_v1_cpuacct_usage_past_the_budget_ends_the_tree_naming_it(tmp_path: Path) -> None:
    limits = TreeLimits.create(None, None, [Hierarchy(1, ("cpuacct",), str(tmp_path))])
    usage = made(tmp_path) / "cpuacct.usage"
    usage.write_text("1500000000\n")  # 1.5 s, in ns
    assert limits.cpu_used() == 1.5
    limits.cpu_seconds = 2
    usage.write_text(f"{4 * 10**9}\n")
    limits._watch_cpu()  # returns once the budget is passed: no thread needed here
    reached = limits.reached()
    assert reached is not None and "the CPU time limit (2 s" in reached, reached
    assert limits.reached() is None


def test_v2_cpu_time_is_read_from_cpu_stat(tmp_path: Path) -> None:
    limits = TreeLimits.create(None, None, [Hierarchy(2, ("memory", "pids", "cpu"),
                                                      str(tmp_path))])
    (made(tmp_path) / "cpu.stat").write_text("usage_usec 2500000\nuser_usec 2000000\n")
    assert limits.cpu_used() == 2.5
    assert "cpu-cgroup-v2" in limits.request()["cgroups"]
