"""Workers prepared ahead of their first call: claimed once, and never left behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from grader.registry import problems
from grader.sandbox.host.pool import Load, WorkerPool
from grader.sandbox.host.process import SubmissionProcess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="workers are forked, and so prepared, on Linux only")

CROP = next(p for p in problems() if p.slug == "crop-context")


def broken_crop(tmp_path: Path) -> Path:
    broken = tmp_path / "broken.py"
    broken.write_text("class Solution:\n"
                      "    def crop_context(self, context, n):\n"
                      "        return 1 +\n")
    return broken


def good_and_bad(pool: WorkerPool, broken: Path) -> SubmissionProcess:
    """The reference loads and answers, `broken` fails to load, both from `pool`
    (bad loaded after good); the reference's process."""
    good = SubmissionProcess(str(CROP.reference), "Solution", ["crop_context"], pool)
    bad = SubmissionProcess(str(broken), "Solution", ["crop_context"], pool)
    assert good.load() is None
    assert bad.load()["type"] == "SyntaxError"
    outcome = good.call("crop_context", (torch.tensor([[1, 2, 3]]), 2))
    assert torch.equal(outcome.result, torch.tensor([[2, 3]]))
    return good


def test_a_prepared_worker_has_loaded_the_submission_by_its_first_call(tmp_path):
    broken = broken_crop(tmp_path)
    with WorkerPool() as pool:
        pool.prepare([Load.of(str(CROP.reference), "Solution", ["crop_context"]),
                      Load.of(str(broken), "Solution", ["crop_context"])])
        good = good_and_bad(pool, broken)
        # claimed once: a restart after the worker ends starts a new one
        assert pool.claim(Load.of(good.path, "Solution", ["crop_context"])) is None


def test_closing_the_pool_ends_workers_nobody_claimed():
    pool = WorkerPool()
    pool.start()
    pool.prepare([Load.of(str(CROP.reference), "Solution", ["crop_context"])])
    server = pool.server
    assert server is not None
    pool.close()
    # every worker runs inside the fork server's PID namespace and dies with it
    assert server.process.poll() is not None


def test_a_spawned_server_serves_one_pool_and_ends_when_it_closes():
    """How a gradebook gives each learner's grade a fork server without a torch import."""
    from grader.sandbox.host.forkserver_client import ForkServerClient
    from grader.sandbox.wire.limits import Limits
    from grader.sandbox.worker.machine import probe

    parent = ForkServerClient(sandbox=Limits())
    try:
        control, pid = parent.spawn()
        with WorkerPool(sandbox=Limits(), server_control=control) as pool:
            crop = SubmissionProcess(str(CROP.reference), "Solution", ["crop_context"], pool)
            outcome = crop.call("crop_context", (torch.tensor([[1, 2, 3]]), 2))
            assert torch.equal(outcome.result, torch.tensor([[2, 3]]))
            if probe().namespaces:
                # The spawned server's own namespaces still let each worker make its own.
                assert "worker-pid-namespace" in pool.layers
        # The pool closed its end: the spawned server exits by itself, with code 0
        # (not killed by `end`), and every worker in its PID namespace with it.
        assert parent.end(pid, grace=30) == 0
    finally:
        parent.close()


def test_a_spawned_server_has_a_proc_of_its_own(tmp_path):
    """/proc shows one grade's processes only, as it did with a server per grade; what the
    sandbox counts there (its process limit) then counts no other learner's."""
    from grader.sandbox.host.forkserver_client import ForkServerClient
    from grader.sandbox.wire.limits import Limits
    from grader.sandbox.worker.machine import probe

    if not probe().namespaces:
        pytest.skip("no namespaces on this system")
    probe_file = tmp_path / "solution.py"
    # Unsandboxed, so that it may look at /proc: what it sees is the spawned server's.
    probe_file.write_text("import os\n\n\nclass Solution:\n"
                          "    def crop_context(self, context, context_length):\n"
                          "        return [os.readlink('/proc/self'), os.getpid(), os.getppid(),\n"
                          "                sorted(int(p) for p in os.listdir('/proc')"
                          " if p.isdigit())]\n")
    parent = ForkServerClient(sandbox=Limits())
    try:
        control, pid = parent.spawn()
        with WorkerPool(server_control=control) as pool:
            seen = SubmissionProcess(str(probe_file), "Solution", ["crop_context"], pool).call(
                "crop_context", (torch.tensor([[1]]), 1)).result
        me, my_pid, parent_pid, listed = seen
        assert me == str(my_pid)  # /proc belongs to the PID namespace it runs in
        assert parent_pid == 1 and listed == [1, my_pid]  # the server and itself, no more
        assert parent.end(pid, grace=30) == 0
    finally:
        parent.close()


def test_workers_that_train_come_from_a_server_of_their_own(tmp_path):
    """The import a torch optimizer needs (torch._dynamo) is made by a server spawned
    for the workers that train: the grade's own server never makes it, so it forks
    every other worker without waiting for it."""
    from grader.sandbox.wire.limits import Limits

    probe_file = tmp_path / "solution.py"
    probe_file.write_text("import sys\n\n\nclass Solution:\n"
                          "    def crop_context(self, context, context_length):\n"
                          "        return ['torch._dynamo' in sys.modules]\n")

    def process(trains: bool) -> SubmissionProcess:
        return SubmissionProcess(str(probe_file), "Solution", ["crop_context"], pool,
                                 trains=trains)

    with WorkerPool(sandbox=Limits()) as pool:
        pool.start()
        pool.prepare([Load.of(str(probe_file), "Solution", ["crop_context"], trains=True),
                      Load.of(str(probe_file), "Solution", ["crop_context"])])
        trained, plain = (process(trains).call("crop_context", (torch.tensor([[1]]), 1))
                          for trains in (True, False))
        assert trained.error is None and plain.error is None
        assert trained.result[0] is True  # ready to build an optimizer
        assert plain.result[0] is False  # forked from a server that never imported it
        training = pool.training
        assert training is not None and not training.broken
        # A worker made after the prepared ones (a restart) comes from the same servers.
        assert process(True).call("crop_context", (torch.tensor([[1]]), 1)).result[0] is True
        assert pool.usable()
        training.broken = True  # as after an exchange with it failed
        assert not pool.usable()  # a session's pool is then made anew (notebook.kernel_pool)
    assert pool.training is None  # closed with the pool (it exits when its control closes)


def test_a_training_server_whose_client_cannot_be_made_is_ended(monkeypatch):
    """Spawned, but its client not made (its scratch folder, say): its control is
    closed, so it ends at once, and the grade's own server trains instead."""
    import socket

    from grader.sandbox.host import pool as pool_module

    made = pool_module.ForkServerClient
    spawned: list[tuple[socket.socket, int]] = []

    def no_client_for_a_spawned_server(debug, sandbox, control=None, inside=None,
                                       forwards=None):
        if control is not None:
            raise OSError("no scratch folder")
        return made(debug, sandbox, control, inside, forwards)

    monkeypatch.setattr(pool_module, "ForkServerClient", no_client_for_a_spawned_server)
    with WorkerPool() as pool:
        pool.start()
        server = pool.server
        assert server is not None
        spawn = server.spawn
        monkeypatch.setattr(server, "spawn", lambda trains: spawned.append(spawn(trains=trains))
                            or spawned[-1])
        assert pool._training_server(server) is None
        (control, pid), = spawned
        assert control.fileno() == -1  # closed
        assert ended(pid)  # it exits once it sees its control closed


def ended(pid: int, seconds: float = 10) -> bool:
    """Whether the process is gone (or a zombie its parent has yet to reap) within
    `seconds`."""
    import time

    import psutil

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def test_spawned_workers_are_one_host_started_ahead_and_ended_with_the_pool(tmp_path):
    """The path other systems take: one host process, started by prepare, serves
    every submission in turn (SpawnHost)."""
    broken = broken_crop(tmp_path)
    loads = [Load.of(str(CROP.reference), "Solution", ["crop_context"]),
             Load.of(str(broken), "Solution", ["crop_context"])]
    pool = WorkerPool(fork=False)
    pool.prepare(loads)
    host = pool.host
    assert host is not None and host.worker.alive  # started ahead of the first load
    # `bad` takes the host over: `good` is loaded again for its call.
    good_and_bad(pool, broken)
    assert pool.host is host  # neither the load error nor the second load needed another
    pool.close()
    assert not host.worker.alive
    assert pool.scratch_root is None
