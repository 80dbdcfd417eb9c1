"""Which cgroup layers a machine gives a worker, and which the report says are missing.

A machine may offer memory and pids cgroups but no CPU one (cgroup v1 without a
writable cpuacct hierarchy): the tree's CPU time is then bounded per process only,
and the report must say so. No kernel is needed: the hierarchies are folders, found
through a mount table and a group list made up for the test, as
test_limits_cgroups.py lays them out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.sandbox.worker.layers import cgroups
from grader.sandbox.worker.layers.cgroups import TreeLimits
from grader.sandbox.worker.machine import Isolation, missing_tree_layers


def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, controllers: list[str],
            version: int = 1) -> tuple[cgroups.Hierarchy, ...]:
    """The hierarchies found on a machine that mounts `controllers` (v1, one mount
    each) or one v2 hierarchy delegating memory and pids, this process at their root."""
    mounts, groups = [], {}
    if version == 1:
        for controller in controllers:
            (tmp_path / controller).mkdir()
            mounts.append(("/", str(tmp_path / controller), "cgroup", {"rw", controller}))
            groups[controller] = "/"
    else:
        (tmp_path / "cgroup.subtree_control").write_text("memory pids\n")
        mounts.append(("/", str(tmp_path), "cgroup2", {"rw"}))
        groups[""] = "/"
    monkeypatch.setattr(cgroups, "_mounts", lambda: mounts)
    monkeypatch.setattr(cgroups, "_own_groups", lambda: groups)
    return cgroups.hierarchies.__wrapped__()  # the real search, not its cached answer


def probed(found: tuple[cgroups.Hierarchy, ...]) -> Isolation:
    """The machine as probe() describes it, with every other tree-wide layer there."""
    return Isolation(
        platform="linux", launcher=("unshare", "--mount-proc"), unprivileged_uid=True,
        cgroups=tuple(h.layer(c) for h in found for c in h.controllers))


def worker_missing(found: tuple[cgroups.Hierarchy, ...]) -> list[str]:
    """What a worker given these groups reports missing (isolate()'s "missing:")."""
    limits = TreeLimits.create(100 << 20, 16, found, cpu_seconds=None)
    try:
        joined = cgroups.join(limits.request().get("cgroups", {}))
    finally:
        limits.closed.set()
    return missing_tree_layers([*joined, "scratch-tmpfs", "unprivileged-uid"])


def test_no_cpuacct_hierarchy_is_a_missing_cpu_cgroup(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    found = machine(tmp_path, monkeypatch, ["memory", "pids"])
    assert [h.controllers for h in found] == [("memory",), ("pids",)]
    assert probed(found).missing() == ["cpu-cgroup"]
    assert worker_missing(found) == ["cpu-cgroup"]


def test_cpuacct_is_the_cpu_cgroup_of_v1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = machine(tmp_path, monkeypatch, ["memory", "pids", "cpuacct"])
    assert "cpuacct-cgroup-v1" in probed(found).summary()
    assert probed(found).missing() == []
    assert worker_missing(found) == []


def test_v2_counts_cpu_time_in_every_group(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    found = machine(tmp_path, monkeypatch, [], version=2)
    assert probed(found).missing() == []
    assert worker_missing(found) == []


def test_no_cgroups_at_all_names_all_three(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    found = machine(tmp_path, monkeypatch, [])
    assert found == ()
    assert probed(found).missing() == ["memory-cgroup", "pids-cgroup", "cpu-cgroup"]
    assert worker_missing(found)[:3] == ["memory-cgroup", "pids-cgroup", "cpu-cgroup"]


def test_cpu_and_cpuacct_mounted_together_share_one_group(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """systemd mounts cpu and cpuacct as one hierarchy: one group a worker, standing for
    both layers (its CPU time counted, its share of the CPU weighed)."""
    (tmp_path / "cpu,cpuacct").mkdir()
    mounts = [("/", str(tmp_path / "cpu,cpuacct"), "cgroup", {"rw", "cpu", "cpuacct"})]
    monkeypatch.setattr(cgroups, "_mounts", lambda: mounts)
    monkeypatch.setattr(cgroups, "_own_groups", lambda: {"cpu": "/", "cpuacct": "/"})
    found = cgroups.hierarchies.__wrapped__()
    assert [h.controllers for h in found] == [("cpuacct", "cpu")]
    limits = TreeLimits.create(None, 16, found, cpu_seconds=None)
    try:
        assert sorted(limits.request()["cgroups"]) == ["cpu-share-cgroup-v1",
                                                       "cpuacct-cgroup-v1"]
        assert limits._cpu_group() is not None
    finally:
        limits.closed.set()
        limits.close()
