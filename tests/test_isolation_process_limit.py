"""The process limit holds for a grader run as an ordinary user as well as for root.

As root the kernel applies RLIMIT_NPROC only because the workers get another real uid;
as an ordinary user without a pids cgroup it is the only count of the tree's
processes, kept in the worker's own user namespace, so the user's other processes
(the grader's own, a classmate's worker) do not use it up. `.ci/as-ordinary-user`
runs this as such a user.
"""

from __future__ import annotations

from test_limits_tree import ISO, grade, pytestmark  # noqa: F401 - its fixture and its skip

PIDS_CGROUP = any(layer.startswith("pids-cgroup") for layer in ISO.cgroups)


def test_processes_stop_at_the_limit_root_or_not(grade) -> None:  # noqa: F811
    graded = grade()
    # The submission stops at the first fork that fails, and says nothing of it.
    started, message = graded.call("processes", 200)
    assert isinstance(started, int) and 0 < started <= 16, (started, message)
    if PIDS_CGROUP:  # the grader reads the group's count, and names the limit anyway
        assert "the process limit (16" in message, message
