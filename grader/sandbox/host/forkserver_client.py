"""The grader's side of a `grader.sandbox.host.forkserver` process: asking it for
workers (forked from it in milliseconds), and ending them."""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import tempfile
import threading
import time
from typing import Any

from grader.sandbox.host.channel import Channel, WorkerDied, close_quietly
from grader.sandbox.host.handles import EXIT_GRACE, WorkerHandle, worker_environment
from grader.sandbox.host.launch import grader_command, refusal
from grader.sandbox.host.scratch_folders import (
    TORCH_CACHE_VARIABLE,
    new_scratch_root,
    remove_tree,
    torch_cache_in,
)
from grader.sandbox.host.witness import Witness
from grader.sandbox.wire.limits import Limits
from grader.sandbox.worker.layers.cgroups import TreeLimits

STARTUP_TIMEOUT = 120.0
LOAD_TIMEOUT = 30.0
# Seconds the processes a worker started get to die with it, once it is ended.
TREE_WAIT = 5.0


class ForkServerClient:
    """The grader's handle on a `grader.sandbox.host.forkserver` process.

    With `sandbox` set, the server runs in its own user, network and PID
    namespaces where the system allows (every process inside dies with it), and
    each worker isolates itself before it loads a submission.
    """

    def __init__(self, debug: bool = False, sandbox: Limits | None = None,
                 control: socket.socket | None = None, inside: str | None = None,
                 forwards: str | None = None) -> None:
        """Start a fork server, or with `control`, talk to one that another server
        spawned for this grader (see `spawn`); `inside`: the scratch root to make
        this one's in (the spawning server's, which it removes however its grader
        ends); `forwards`: the folder of the kept passes a worker handed models maps
        before its sandbox closes (grader/model/forward_store.py)."""
        self.debug = debug
        self.sandbox = sandbox
        self.forwards = forwards
        self.process: subprocess.Popen[bytes] | None = None
        # Every worker's scratch folder is made in it; a server this grader starts
        # works in it and removes it when the grader goes, however it goes.
        self.scratch_root = new_scratch_root(inside)
        if control is None:
            try:
                control = self._start()
            except BaseException:
                remove_tree(self.scratch_root)
                raise
        self.control = control
        self.replies = control.makefile("rb")
        self.lock = threading.Lock()
        self.ready = False
        self.broken = False

    def _start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        prefix: list[str] = []
        torch_cache = torch_cache_in(self.scratch_root)
        env = worker_environment(self.scratch_root, torch_cache)  # its workers inherit it
        if self.sandbox is not None:
            from grader.sandbox.worker.layers.policy import clean_environment
            from grader.sandbox.worker.machine import launcher_prefix

            prefix = launcher_prefix()
            keep = {k: os.environ[k] for k in ("PYTHONPATH", "GPT_KATA_DEBUG")
                    if k in os.environ}
            # Its training preload imports torch._dynamo: without this, torch's cache
            # folder would be made in the system's temporary folder (its TMPDIR is
            # /nonexistent, so Python falls back to /tmp), and left there.
            env = clean_environment(extra={**keep, TORCH_CACHE_VARIABLE: torch_cache})
        self.process = subprocess.Popen(
            [*prefix, *grader_command("grader.sandbox.host.forkserver", str(theirs.fileno()),
                                      self.scratch_root)],
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=None if self.debug else subprocess.DEVNULL,
            env=env, start_new_session=True, cwd=self.scratch_root,
        )
        theirs.close()
        return ours

    @property
    def alive(self) -> bool:
        return not self.broken and (self.process is None or self.process.poll() is None)

    def _reply(self, timeout: float) -> dict:
        # After one failed exchange, a late reply could be taken for the next one's:
        # the server is given up instead.
        if self.broken:
            raise WorkerDied("the fork server stopped answering")
        self.control.settimeout(timeout)
        try:
            line = self.replies.readline()
            if not line:
                raise WorkerDied(f"the fork server has exited{self._why()}")
            return json.loads(line)
        except (OSError, ValueError) as exc:
            self.broken = True
            raise WorkerDied(f"the fork server stopped answering: {exc}") from None
        except WorkerDied:
            self.broken = True
            raise

    def _why(self) -> str:
        """Why a server that this grader started exited, if it says."""
        if self.process is None or self.ready:
            return ""
        try:
            why = refusal(self.process.wait(timeout=EXIT_GRACE))
        except subprocess.TimeoutExpired:
            return ""
        return f": {why}" if why else ""

    def fork(self, submission: str, models: bool = True, trains: bool = False) -> ForkedWorker:
        """A worker for `submission`; with `models`, it loads the grader's models before
        its sandbox is set up, and without them it never holds their code. With
        `trains`, the server first imports what a torch optimizer's first use imports,
        once: the worker and every later one inherit it."""
        request: dict[str, Any] = {"op": "fork", "debug": self.debug, "models": models,
                                   "trains": trains}
        if models and self.forwards is not None:
            request["forwards"] = self.forwards
        scratch = None
        limits: TreeLimits | None = None
        if self.sandbox is not None:
            scratch = tempfile.mkdtemp(prefix="worker-", dir=self.scratch_root)
            seconds = self.sandbox.cpu_seconds
            cpu = {} if seconds is None else {"cpu_seconds": seconds}
            request.update(isolate=True, path=os.path.abspath(submission), scratch=scratch,
                           memory_bytes=self.sandbox.memory_bytes, **cpu)
            from grader.sandbox.worker.machine import worker_limits

            # Limits on the worker's whole tree (cgroups, a scratch tmpfs).
            limits = worker_limits(self.sandbox.memory_bytes, self.sandbox.scratch_bytes, **cpu)
            request.update(limits.request())
        try:
            pid, (channel, witness) = self._new_process(request, 2)
        except BaseException:
            if limits is not None:
                limits.close()
            raise
        return ForkedWorker(self, pid, channel, scratch, Witness(witness), limits)

    def _new_process(self, request: dict[str, Any],
                     ends: int) -> tuple[int, list[socket.socket]]:
        """Send a request that hands the server one end of each of `ends` new socket
        pairs: the pid of the process it forked, and the other ends."""
        pairs = [socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(ends)]
        try:
            with self.lock:
                if not self.ready:
                    self._reply(STARTUP_TIMEOUT)
                    self.ready = True
                try:
                    socket.send_fds(self.control, [json.dumps(request).encode()],
                                    [theirs.fileno() for _ours, theirs in pairs])
                    return int(self._reply(LOAD_TIMEOUT)["pid"]), [ours for ours, _ in pairs]
                except (OSError, KeyError, TypeError, ValueError) as exc:
                    self.broken = True
                    raise WorkerDied(f"the fork server stopped answering: {exc}") from None
        except BaseException:
            close_quietly(*(ours for ours, _theirs in pairs))
            raise
        finally:
            close_quietly(*(theirs for _ours, theirs in pairs))

    def spawn(self, trains: bool = False) -> tuple[socket.socket, int]:
        """A fork server of its own for another grader: the socket to hand that grader
        (`ForkServerClient(control=...)`), and the pid to `end` once it is done.

        It is forked from this one, so it costs milliseconds instead of a torch
        import, and holds nothing but what this server preloaded; with `trains`, it
        then imports what training needs (see `fork`) in a process of its own, while
        this one goes on forking workers.
        """
        request = {"op": "spawn", "isolate": self.sandbox is not None, "trains": trains}
        pid, (ours,) = self._new_process(request, 1)
        return ours, pid

    def end(self, pid: int, grace: float) -> int | None:
        with self.lock:
            try:
                self.control.sendall(json.dumps({"op": "end", "pid": pid,
                                                 "grace": grace}).encode())
                return self._reply(grace + 10.0).get("status")
            except (OSError, WorkerDied):
                return None

    def close(self) -> None:
        # The server exits when its control socket closes (the reader made by
        # makefile() holds the socket open too, so it is closed first).
        close_quietly(self.replies, self.control)
        if self.process is not None:  # a spawned server is ended by its parent server
            # Nothing in it needs a clean exit, and unloading torch takes a second.
            self.process.kill()
            self.process.wait()
        remove_tree(self.scratch_root)


def wait_for_hangup(end: socket.socket, seconds: float) -> bool:
    """Wait until no process holds the other end of `end` (all have exited), for at most
    `seconds`; whether that happened. A worker stopped from outside holds it for ever."""
    try:
        poller = select.poll()
        poller.register(end, 0)  # hang-ups and errors are always reported
    except (AttributeError, OSError, ValueError):  # no poll(), or already closed
        return False
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            if any(events & (select.POLLHUP | select.POLLERR | select.POLLNVAL)
                   for _fd, events in poller.poll(left * 1000)):
                return True
        except InterruptedError:
            continue
    return False


class ForkedWorker(WorkerHandle):
    def __init__(self, server: ForkServerClient, pid: int, channel: socket.socket,
                 scratch: str | None, witness: Witness,
                 limits: TreeLimits | None = None) -> None:
        self.server, self.pid, self.socket, self.scratch = server, pid, channel, scratch
        self.witness = witness
        self.limits = limits
        self.status: int | None = None
        self.finished = False
        self.channel = Channel(channel.makefile("rb"), channel.makefile("wb"))

    @property
    def alive(self) -> bool:
        return not self.finished

    def cpu_seconds(self) -> float | None:
        # Its cgroup's account, the whole tree's: the server's pids are not this
        # process's to ask (the server has a PID namespace of its own).
        return self.limits.cpu_used() if self.limits is not None and not self.finished \
            else None

    def _finish(self, grace: float) -> int | None:
        if not self.finished:
            self.finished = True
            self.status = self.server.end(self.pid, grace)
            if self.limits is not None:
                # Ends what is left in its groups, even where the server could not
                # end the worker (a server stopped from outside).
                self.limits.close()
            # The rest of its tree dies after it (the parent-death signal, its PID
            # namespace torn down): each of them holds the channel's other end.
            wait_for_hangup(self.socket, TREE_WAIT)
            with contextlib.suppress(OSError):
                # Wakes a write still waiting for a worker that stopped reading.
                self.socket.shutdown(socket.SHUT_RDWR)
            self.channel.close()
            self.socket.close()
            self.witness.close()
            if self.scratch:
                remove_tree(self.scratch)
        return self.status
