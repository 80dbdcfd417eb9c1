"""The grader's handle on one worker process, and the spawned kinds of worker:
a fresh `python -m grader.sandbox.worker.serve` of its own, or a tenancy of a host
that loads a grade's submissions in turn."""

from __future__ import annotations

import os
import queue
import subprocess
import time

from grader.sandbox.host.channel import Channel, SendTimeout, WorkerDied
from grader.sandbox.host.ending import describe_exit, start_group, wait_then_kill
from grader.sandbox.host.launch import grader_command, refusal
from grader.sandbox.host.scratch_folders import TORCH_CACHE_VARIABLE, empty_folder, remove_tree
from grader.sandbox.host.slow_or_endless import (
    machine_load,
    no_answer,
    process_tree_cpu,
    starved,
)
from grader.sandbox.host.witness import Witness
from grader.sandbox.wire.encoding import ProtocolError
from grader.sandbox.wire.replies import unreadable

EXIT_GRACE = 2.0  # seconds a worker that closed its channel gets to finish exiting
KILLED_WAIT = 5.0  # seconds a killed worker gets to be reaped
# What the grader holds that a submission must never be handed, even where it runs
# without the sandbox (whose clean environment holds none of it): the instructor's
# seed for the drawn examples (`grader.grading.subject.strategies.SEED_VARIABLE`), with
# which a submission could draw the very examples it is graded on.
GRADER_SECRETS = ("GPT_KATA_EXAMPLES_SEED",)


def worker_environment(scratch: str, torch_cache: str) -> dict[str, str]:
    """The environment of a process started without the sandbox to run submissions:
    the grader's own, without its secrets, one thread per pool, its scratch folder
    for temporary files (a spawned worker's own; for a fork server without the
    sandbox, the grade's scratch root, which its workers share), removed with it,
    the grade's folder for torch's cache (`torch_cache_in`), and matplotlib drawing
    off screen: a submission's plt.show() returns at once, as in the sandbox (which
    has no display), where macOS's and Windows's own backends opened a window and
    waited for it to be closed, until the call ran out of time."""
    env = {k: v for k, v in os.environ.items() if k not in GRADER_SECRETS}
    env.update({"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1",
                TORCH_CACHE_VARIABLE: torch_cache, "MPLBACKEND": "Agg"})
    env.update(dict.fromkeys(("TMPDIR", "TEMP", "TMP"), scratch))  # TEMP and TMP: Windows'
    return env


class WorkerHandle:
    """One worker process; subclasses say how it is started and ended."""

    channel: Channel
    witness: Witness | None = None  # where model calls can be observed from outside
    greeted = False  # whether it has sent a message yet
    # When the last message was sent, and the CPU time the worker had used then.
    sent_at: float | None = None
    cpu_at_send: float | None = None

    def cpu_seconds(self) -> float | None:
        """CPU seconds the worker's tree has used so far, where that can be read."""
        return None

    def send(self, message: dict, timeout: float) -> None:
        self.sent_at, self.cpu_at_send = time.monotonic(), self.cpu_seconds()
        try:
            self.channel.send(message, timeout)
        except SendTimeout as exc:
            self.kill()
            raise WorkerDied(str(exc), timed_out=True) from None
        except (OSError, ValueError):
            raise WorkerDied(self.end()) from None

    def receive(self, timeout: float) -> dict:
        try:
            reply = self.channel.replies.get(timeout=timeout)
        except queue.Empty:
            said, busy = self.no_answer(timeout)  # measured before the worker is ended
            self.kill()
            raise WorkerDied(said, timed_out=True, busy=busy) from None
        if isinstance(reply, ProtocolError):
            self.kill()
            raise WorkerDied(unreadable(reply))
        if reply is None or isinstance(reply, Exception):
            # The channel broke (reset, closed): most likely the process is gone.
            raise WorkerDied(self.end())
        self.greeted = True
        return reply

    def no_answer(self, timeout: float) -> tuple[str, bool]:
        """Why no answer came, from the CPU time the worker used since the message, and
        whether the busy machine may be why (`starved`)."""
        now, cpu = time.monotonic(), self.cpu_seconds()
        waited = now - self.sent_at if self.sent_at is not None else timeout
        used = cpu - self.cpu_at_send if cpu is not None and self.cpu_at_send is not None \
            else None
        load = machine_load()
        return no_answer(timeout, used, waited, load), starved(used, waited, load)

    def request(self, message: dict, timeout: float) -> dict:
        self.send(message, timeout)
        return self.receive(timeout)

    def end(self) -> str:
        """Wait briefly for an exit already under way; why the worker ended."""
        code = self._finish(EXIT_GRACE)
        # Before its first message no learner code has run: the exit is the worker's own.
        return (not self.greeted and refusal(code)) or describe_exit(code)

    def kill(self) -> None:
        self._finish(0.0)

    def release(self) -> None:
        """Give the worker up after its submission failed to load (ended, unless shared)."""
        self.kill()

    @property
    def shared(self) -> bool:
        """Whether its process goes on to serve the grade's next submissions."""
        return False

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    def _finish(self, grace: float) -> int | None:
        raise NotImplementedError


class SpawnedWorker(WorkerHandle):
    """A fresh `python -m grader.sandbox.worker.serve` of this grader's, working in its own
    scratch folder and talking over its stdin and stdout; given `forwards`, the folder
    of a practice grade's kept forward passes (grader/model/forward_store.py)."""

    def __init__(self, scratch: str, torch_cache: str, debug: bool = False,
                 forwards: str | None = None) -> None:
        env = worker_environment(scratch, torch_cache)
        self.scratch = scratch
        # Its own group (a session, or a job on Windows), so that ending it ends
        # whatever it started too.
        self.process, self.job = start_group(
            grader_command("grader.sandbox.worker.serve", *([forwards] if forwards else [])),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.DEVNULL, env=env, cwd=scratch)
        assert self.process.stdout and self.process.stdin
        self.channel = Channel(self.process.stdout, self.process.stdin)
        machine_load()  # on Windows, starts the sampling a time-out's load is read from

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def cpu_seconds(self) -> float | None:
        return process_tree_cpu(self.process.pid)

    def _finish(self, grace: float) -> int | None:
        try:
            # Its group goes even when it exited in time: what it started may outlive it.
            return wait_then_kill(self.process, grace, job=self.job, always=True,
                                  then_wait=KILLED_WAIT)
        finally:
            self.channel.close()
            if self.scratch:
                remove_tree(self.scratch)


class SpawnHost:
    """One spawned worker that loads a grade's submissions one after another.

    Off Linux there is no fork server, and each worker of its own would import
    torch again (seconds each). The host imports it once; before each load it puts
    back the global state the previous submission may have changed
    (grader/sandbox/worker/baseline.py), and its scratch folder is emptied. One tenant (a
    `HostedWorker`) holds it at a time: a new one evicts the last, whose next call
    loads its submission again. A host that crashed, ran out of time or was ended, or
    in which a thread a tenant started still runs, is never reused: the next tenant
    gets a new one.
    """

    def __init__(self, worker: SpawnedWorker) -> None:
        self.worker = worker
        self.hello: dict | None = None  # its first message, which every tenant is shown
        self.tenant: HostedWorker | None = None
        self.tenants = 0  # tenants so far
        # A thread a tenant started still runs in it (the worker says so in its replies):
        # it could change the next tenant's state after it was put back.
        self.threads_left = False

    @property
    def usable(self) -> bool:
        return self.worker.alive and not self.threads_left and not (
            self.hello and isinstance(self.hello.get("error"), dict))


class HostedWorker(WorkerHandle):
    """One submission's lease of a `SpawnHost`: alive while it is the host's tenant."""

    def __init__(self, host: SpawnHost) -> None:
        self.host = host
        self.channel = host.worker.channel
        self.greeted = host.worker.greeted
        self._hello_due = True
        if host.tenants and host.worker.scratch:
            empty_folder(host.worker.scratch)  # nothing written for an earlier problem
        host.tenants += 1
        host.tenant = self

    def receive(self, timeout: float) -> dict:
        if self._hello_due:  # the host greets once; each tenant is shown that greeting
            self._hello_due = False
            if self.host.hello is None:
                self.host.hello = self.host.worker.receive(timeout)
            self.greeted = True
            return self.host.hello
        reply = super().receive(timeout)
        if reply.get("threads_left") is True:
            self.host.threads_left = True
        return reply

    def cpu_seconds(self) -> float | None:
        # The host's tree is the tenant's while it is the tenant: a time-out then says
        # what the code did, as a worker of its own's does.
        return self.host.worker.cpu_seconds()

    @property
    def shared(self) -> bool:
        return True

    @property
    def alive(self) -> bool:
        return self.host.tenant is self and self.host.worker.alive

    def release(self) -> None:
        # Its load failed cleanly: the host stays, and the next load starts afresh.
        if self.host.tenant is self:
            self.host.tenant = None

    def _finish(self, grace: float) -> int | None:
        if self.host.tenant is not self:
            return None  # evicted: the host is another tenant's now
        self.host.tenant = None
        return self.host.worker._finish(grace)
