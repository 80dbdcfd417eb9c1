"""The grader's side of the worker processes: start them, talk to them, end them.

Every call has a wall-clock limit. A worker that hangs, crashes or exits is
ended and replaced, and the call fails with a plain message; grading goes on.

On Linux, workers are forked from a fork server that has imported torch once
(`grader.sandbox.forkserver`), so a new worker costs milliseconds. Elsewhere
each worker is a fresh `python -m grader.sandbox.worker`; a grade's workers are
one such process, which loads each problem's submission in turn (`SpawnHost`).
"""

from __future__ import annotations

import json
import os
import queue
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from grader.sandbox.ending import describe_exit, end_group, start_group
from grader.sandbox.launch import grader_command, refusal
from grader.sandbox.layers.cgroups import TreeLimits, with_limit_named
from grader.sandbox.protocol import (
    HEADER,
    ModelSpec,
    ProtocolError,
    encode,
    read_call_reply,
    read_frame,
    read_item_reply,
    read_load_reply,
    unreadable,
)
from grader.sandbox.witness import Witness

STARTUP_TIMEOUT = 120.0
LOAD_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 20.0
DEFAULT_MEMORY_MB = 1024
DEFAULT_SCRATCH_MB = 64
DEFAULT_PROBLEM_BUDGET = 120.0  # seconds, all calls of one problem's checks together
EXIT_GRACE = 2.0  # seconds a worker that closed its channel gets to finish exiting
# Seconds the processes a worker started get to die with it, once it is ended.
TREE_WAIT = 5.0
SPAWN_VARIABLE = "GPT_KATA_SPAWN_WORKERS"


# Frames up to this size are written directly; larger ones under a deadline.
SMALL_FRAME = 4096


class SendTimeout(Exception):
    """A frame was not taken by the worker in time."""


class WorkerDied(Exception):
    """The worker stopped answering: it exited, crashed or ran out of time."""

    def __init__(self, message: str, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


def close_quietly(*ends: IO[bytes] | socket.socket) -> None:
    """Close each of `ends` in turn: one that is already broken must not keep the
    others open."""
    for end in ends:
        try:
            end.close()
        except OSError:
            pass


class Channel:
    """Length-prefixed JSON frames to and from one worker, with time limits on replies."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes]) -> None:
        self.reader, self.writer = reader, writer
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            while True:
                message = read_frame(self.reader)
                self.replies.put(message)
                if message is None:
                    return
        except (ProtocolError, OSError, ValueError) as exc:
            self.replies.put(exc)

    def send(self, message: dict, timeout: float) -> None:
        """Write one frame, or raise SendTimeout if the worker has not taken it all
        within `timeout` seconds (a worker that stops reading must not hang the grader)."""
        data = json.dumps(message, allow_nan=False).encode()
        frame = HEADER.pack(len(data)) + data
        if len(frame) <= SMALL_FRAME:
            # The protocol is one request, then its reply: the worker has read all
            # that came before, so a frame this small fits in the empty buffer.
            self._write(frame)
            return
        done = threading.Event()
        failed: list[BaseException] = []

        def write() -> None:
            try:
                self._write(frame)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                failed.append(exc)
            finally:
                done.set()

        threading.Thread(target=write, daemon=True).start()
        # Ended from here, the worker closes its end, and the write fails at once.
        if not done.wait(timeout):
            raise SendTimeout(f"it read nothing of what the grader sent for {timeout:g} "
                              "seconds (it stopped reading?)")
        if failed:
            raise failed[0]

    def _write(self, frame: bytes) -> None:
        self.writer.write(frame)
        self.writer.flush()

    def close(self) -> None:
        close_quietly(self.writer, self.reader)


class Worker:
    """One worker process; subclasses say how it is started and ended."""

    channel: Channel
    witness: Witness | None = None  # where model calls can be observed from outside
    greeted = False  # whether it has sent a message yet

    def send(self, message: dict, timeout: float) -> None:
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
            self.kill()
            raise WorkerDied(f"no answer within {timeout:g} seconds (an endless loop?)",
                             timed_out=True) from None
        if isinstance(reply, ProtocolError):
            self.kill()
            raise WorkerDied(unreadable(reply))
        if reply is None or isinstance(reply, Exception):
            # The channel broke (reset, closed): most likely the process is gone.
            raise WorkerDied(self.end())
        self.greeted = True
        return reply

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
    def alive(self) -> bool:
        raise NotImplementedError

    def _finish(self, grace: float) -> int | None:
        raise NotImplementedError


class SpawnedWorker(Worker):
    """A fresh `python -m grader.sandbox.worker` of this grader's, working in its own
    scratch folder and talking over its stdin and stdout."""

    def __init__(self, debug: bool = False, scratch: str | None = None) -> None:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
        self.scratch = scratch
        # Its own group (a session, or a job on Windows), so that ending it ends
        # whatever it started too.
        self.process, self.job = start_group(
            grader_command("grader.sandbox.worker"),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.DEVNULL, env=env, cwd=scratch)
        assert self.process.stdout and self.process.stdin
        self.channel = Channel(self.process.stdout, self.process.stdin)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _finish(self, grace: float) -> int | None:
        try:
            return self.process.wait(timeout=grace) if grace else self._kill_now()
        except subprocess.TimeoutExpired:
            return self._kill_now()
        finally:
            end_group(self.process, self.job)  # what it started may outlive it
            self.channel.close()
            if self.scratch:
                remove_tree(self.scratch)

    def _kill_now(self) -> int | None:
        end_group(self.process, self.job)
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None


class SpawnHost:
    """One spawned worker that loads a grade's submissions one after another.

    Off Linux there is no fork server, and each worker of its own would import
    torch again (seconds each). The host imports it once; before each load it puts
    back the global state the previous submission may have changed
    (grader/sandbox/baseline.py), and its scratch folder is emptied. One tenant (a
    `HostedWorker`) holds it at a time: a new one evicts the last, whose next call
    loads its submission again. A host that crashed, ran out of time or was ended is
    never reused: the next tenant gets a new one.
    """

    def __init__(self, worker: SpawnedWorker) -> None:
        self.worker = worker
        self.hello: dict | None = None  # its first message, which every tenant is shown
        self.tenant: HostedWorker | None = None
        self.tenants = 0  # tenants so far

    @property
    def usable(self) -> bool:
        return self.worker.alive and not (self.hello and isinstance(self.hello.get("error"),
                                                                      dict))


class HostedWorker(Worker):
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
        return super().receive(timeout)

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


def empty_folder(path: str) -> None:
    """Remove what is in a folder, keeping the folder (a host works in it)."""
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            remove_tree(full)
        else:
            try:
                os.chmod(full, 0o600)
                os.remove(full)
            except OSError:
                pass


def new_scratch_root() -> str:
    """A folder for everything one grade's workers write, removed as a whole.

    Made in the temporary folder, which a gradebook sets to a folder of its own
    for each learner's grade: whoever removes that removes every worker's scratch.
    """
    return tempfile.mkdtemp(prefix="gpt-kata-grade-")


def remove_tree(path: str) -> None:
    """Remove a scratch folder, whatever its files' modes."""
    def retry(function: Callable, name: str, _exc: object) -> None:
        try:
            os.chmod(os.path.dirname(name) or ".", 0o700)
            os.chmod(name, 0o700)
            function(name)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


@dataclass(frozen=True)
class Sandbox:
    """The limits a sandboxed worker runs under."""

    memory_bytes: int = DEFAULT_MEMORY_MB * 2**20  # above what the worker holds at start
    # CPU seconds of one worker; None keeps the policy's own limit, the one grading uses.
    cpu_seconds: int | None = None
    # The size of the worker's scratch folder (a tmpfs of its own, where it can have one).
    scratch_bytes: int | None = DEFAULT_SCRATCH_MB * 2**20


class ForkServer:
    """The grader's handle on a `grader.sandbox.forkserver` process.

    With `sandbox` set, the server runs in its own user, network and PID
    namespaces where the system allows (every process inside dies with it), and
    each worker isolates itself before it loads a submission.
    """

    def __init__(self, debug: bool = False, sandbox: Sandbox | None = None,
                 control: socket.socket | None = None) -> None:
        """Start a fork server, or with `control`, talk to one that another server
        spawned for this grader (see `spawn`)."""
        self.debug = debug
        self.sandbox = sandbox
        self.process: subprocess.Popen[bytes] | None = None
        # Every worker's scratch folder is made in it; a server this grader starts
        # works in it and removes it when the grader goes, however it goes.
        self.scratch_root = new_scratch_root()
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
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
        if self.sandbox is not None:
            from grader.sandbox.isolation import clean_environment, launcher_prefix

            prefix = launcher_prefix()
            keep = {k: os.environ[k] for k in ("PYTHONPATH", "GPT_KATA_DEBUG")
                    if k in os.environ}
            env = clean_environment(extra=keep)
        self.process = subprocess.Popen(
            [*prefix, *grader_command("grader.sandbox.forkserver", str(theirs.fileno()),
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

    def fork(self, submission: str) -> ForkedWorker:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        witness_ours, witness_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request: dict[str, Any] = {"op": "fork", "debug": self.debug}
        scratch = None
        limits: TreeLimits | None = None
        if self.sandbox is not None:
            scratch = tempfile.mkdtemp(prefix="worker-", dir=self.scratch_root)
            request.update(isolate=True, path=os.path.abspath(submission), scratch=scratch,
                           memory_bytes=self.sandbox.memory_bytes)
            if self.sandbox.cpu_seconds is not None:
                request["cpu_seconds"] = self.sandbox.cpu_seconds
            from grader.sandbox.isolation import worker_limits

            # Limits on the worker's whole tree (cgroups, a scratch tmpfs).
            cpu = {} if self.sandbox.cpu_seconds is None else {"cpu_seconds":
                                                               self.sandbox.cpu_seconds}
            limits = worker_limits(self.sandbox.memory_bytes, self.sandbox.scratch_bytes, **cpu)
            request.update(limits.request())
        try:
            pid = self._new_process(request, theirs, witness_theirs)
        except BaseException:
            if limits is not None:
                limits.close()
            raise
        finally:
            theirs.close()
            witness_theirs.close()
        return ForkedWorker(self, pid, ours, scratch, Witness(witness_ours), limits)

    def _new_process(self, request: dict[str, Any], *ends: socket.socket) -> int:
        """Send a request that hands the server `ends`; the pid of the process it forked."""
        with self.lock:
            if not self.ready:
                self._reply(STARTUP_TIMEOUT)
                self.ready = True
            try:
                socket.send_fds(self.control, [json.dumps(request).encode()],
                                [end.fileno() for end in ends])
                return int(self._reply(LOAD_TIMEOUT)["pid"])
            except (OSError, KeyError, TypeError, ValueError) as exc:
                self.broken = True
                raise WorkerDied(f"the fork server stopped answering: {exc}") from None

    def spawn(self) -> tuple[socket.socket, int]:
        """A fork server of its own for another grader: the socket to hand that grader
        (`ForkServer(control=...)`), and the pid to `end` once it is done.

        It is forked from this one, so it costs milliseconds instead of a torch
        import, and holds nothing but what this server preloaded.
        """
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        request = {"op": "spawn", "isolate": self.sandbox is not None}
        try:
            pid = self._new_process(request, theirs)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
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


class ForkedWorker(Worker):
    def __init__(self, server: ForkServer, pid: int, channel: socket.socket,
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
            try:
                # Wakes a write still waiting for a worker that stopped reading.
                self.socket.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self.channel.close()
            self.socket.close()
            self.witness.close()
            if self.scratch:
                remove_tree(self.scratch)
        return self.status


class WorkerPool:
    """Hands out fresh workers, forked from a fork server where the system allows.

    `sandbox` isolates each worker with every layer the system offers (Linux
    only); `layers` then says which ones ran.
    """

    def __init__(self, debug: bool = False, fork: bool | None = None,
                 sandbox: Sandbox | None = None,
                 server_control: socket.socket | None = None) -> None:
        """`server_control`: a fork server spawned for this pool (`ForkServer.spawn`)."""
        self.debug = debug
        self.server_control = server_control
        linux = sys.platform.startswith("linux")
        if fork is None:
            # SPAWN_VARIABLE=1 takes the path other systems take, to test it on Linux.
            fork = linux and os.environ.get(SPAWN_VARIABLE) != "1"
        self.use_fork = fork
        self.scratch_root: str | None = None  # spawned workers' scratch folders
        self.sandbox = sandbox if linux else None
        self.server: ForkServer | None = None
        self.workers: list[Worker] = []
        self.layers: list[str] = []
        self._lock = threading.Lock()
        self._generation = 0  # closes so far: what was prepared before one is not claimed
        # Workers started ahead of their first call, by submission path.
        self._prepared: dict[Load, queue.Queue] = {}
        # Set by `prepare` on the spawned path: one process serves all of a grade's
        # problems in turn (see SpawnHost).
        self.hosting = False
        self.host: SpawnHost | None = None

    def start(self) -> None:
        """Start the fork server now, so its imports overlap with the grader's."""
        if self.use_fork and self.server is None:
            try:
                self.server = ForkServer(self.debug, self.sandbox, self.server_control)
            except OSError:
                self.use_fork = False

    def take(self, submission: str) -> Worker:
        self.start()
        if self.server is None and self.hosting:
            return HostedWorker(self._host())
        worker = (self.server.fork(submission) if self.server is not None
                  else SpawnedWorker(self.debug, self._spawned_scratch()))
        with self._lock:
            self.workers = [w for w in self.workers if w.alive] + [worker]
        return worker

    def _spawned_scratch(self, generation: int | None = None) -> str:
        with self._lock:
            if generation is not None and generation != self._generation:
                raise OSError("the pool was closed")
            if self.scratch_root is None:
                self.scratch_root = new_scratch_root()
            return tempfile.mkdtemp(prefix="worker-", dir=self.scratch_root)

    def prepare(self, loads: list[Load]) -> None:
        """Start a worker for each submission and have it load, in the background.

        The grader imports torch and pytest meanwhile, so by the first check each
        submission is loaded: a grade of sixteen problems no longer waits for
        sixteen loads in turn. On the spawned path one host process is started
        instead, which imports torch while the grader does and then serves every
        problem of the grade in turn (SpawnHost): a torch import per grade, not
        per problem.
        """
        slots: dict[Load, queue.Queue] = {load: queue.Queue(1) for load in loads}
        if self.server is not None:
            self._prepared.update(slots)
            threading.Thread(target=self._prepare, args=(self.server, slots),
                             daemon=True).start()
        elif not self.use_fork:
            self.hosting = True
            self._host()

    def _host(self) -> SpawnHost:
        """The host for the next submission: the current one, or a new one if it
        crashed, ran out of time or was ended."""
        with self._lock:
            host = self.host
        if host is not None and host.usable:
            return host
        worker = SpawnedWorker(self.debug, self._spawned_scratch())
        host = SpawnHost(worker)
        with self._lock:
            self.host = host
            self.workers = [w for w in self.workers if w.alive] + [worker]
        return host

    def _prepare(self, server: ForkServer, slots: dict[Load, queue.Queue]) -> None:
        for load, slot in slots.items():
            try:
                worker = server.fork(load.path)
                with self._lock:
                    closed = self.server is not server
                    if not closed:
                        self.workers.append(worker)
                if closed:  # the pool closed meanwhile: nobody will claim it
                    worker.kill()
                    return
                hello = worker.receive(STARTUP_TIMEOUT)
                if not isinstance(hello.get("error"), dict):
                    worker.send(load.request(), LOAD_TIMEOUT)
                slot.put((worker, hello))
            except (WorkerDied, OSError, ValueError):
                slot.put(None)  # the first call starts one the usual way

    def claim(self, load: Load) -> tuple[Worker, dict] | None:
        """A prepared worker for this submission, already asked to load it, if any."""
        slot = self._prepared.pop(load, None)
        if slot is None:
            return None
        try:
            return slot.get(timeout=STARTUP_TIMEOUT + LOAD_TIMEOUT)
        except queue.Empty:
            return None

    @property
    def server_failed(self) -> bool:
        """Whether the fork server stopped answering or exited while in use: then what
        its workers were graded on says nothing about the code (it can be stopped
        from outside the sandbox, by a process of the same real uid), and the grade
        must not count."""
        server = self.server
        return server is not None and (server.broken or not server.alive)

    def welcome(self, hello: dict) -> None:
        """Note which sandbox layers a new worker reports."""
        self.layers = [str(layer) for layer in hello.get("isolation", [])][:20]

    def close(self) -> None:
        self._prepared.clear()
        with self._lock:
            self._generation += 1
            workers, self.workers = self.workers, []
            server, self.server = self.server, None
            self.host = None
        for worker in workers:
            worker.kill()
        if server is not None:
            server.close()
        if self.scratch_root is not None:
            remove_tree(self.scratch_root)
            self.scratch_root = None

    def __enter__(self) -> WorkerPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class CallOutcome:
    """What a submission's call produced: a result or an error, plus side effects."""

    result: Any = None
    error: dict | None = None
    after: dict[int, Any] | None = None
    model_changed: bool = False
    model_calls: list | None = None
    # Each witnessed forward pass: its token ids and its last position's logits.
    model_passes: list | None = None
    output: str = ""


def witnessed(outcome: CallOutcome, witness: Witness, iterate: bool) -> None:
    """Replace what the worker said about its model calls with what the witness saw."""
    with witness.lock:
        calls, marks = list(witness.calls), list(witness.marks)
        # Kept even when the call failed: a trace shows the steps before the error.
        outcome.model_passes = list(witness.passes)
    if outcome.error is not None:
        return
    outcome.model_calls = calls
    if iterate:
        chunks = outcome.result
        if not isinstance(chunks, list) or len(chunks) != len(marks) or not all(
                isinstance(pair, list) and len(pair) == 2 for pair in chunks):
            raise ValueError("its chunks do not match what the witness saw come out")
        outcome.result = [[chunk, count] for (chunk, _), count in zip(chunks, marks)]


@dataclass(frozen=True)
class Load:
    """What a worker loads: a submission file's class, and how it is called."""

    path: str  # absolute
    class_name: str
    methods: tuple[str, ...]
    module: bool = False  # an nn.Module the grader builds, instead of a Solution

    @classmethod
    def of(cls, path: str, class_name: str, methods: list[str] | tuple[str, ...],
           module: bool = False) -> Load:
        return cls(os.path.abspath(path), class_name, tuple(methods), module)

    def request(self) -> dict:
        return {"op": "load", "path": self.path, "class": self.class_name,
                "methods": list(self.methods), "module": self.module}


class SubmissionProcess:
    """One submission file, loaded in its own worker; restarted if it dies."""

    def __init__(self, path: str, class_name: str, methods: list[str], pool: WorkerPool,
                 timeout: float = DEFAULT_CALL_TIMEOUT,
                 budget: float = DEFAULT_PROBLEM_BUDGET, witnessed: bool = False,
                 module: bool = False) -> None:
        self.path = os.path.abspath(path)  # a sandboxed worker runs in its scratch folder
        # module: the class is a torch.nn.Module, built by each call (grader/model/parts.py).
        self.load_spec = Load.of(self.path, class_name, methods, module)
        self.pool = pool
        self.timeout = timeout
        # Seconds all calls together may take: calls that each stay just under the
        # per-call limit must not stretch one problem's grade without end.
        self.budget = budget
        self.spent = 0.0
        self.calls = 0  # calls sent to the submission so far
        # Run the model's forward passes in the grader, which logs them: for
        # checks that judge how the model is used.
        self.witnessed = witnessed
        self._worker: Worker | None = None
        self.load_error: dict | None = None
        # Set by the first call that runs out of time: later checks of the same
        # problem would most likely hang too, so they are not run.
        self.timed_out: str | None = None

    def _ensure(self) -> Worker:
        if self._worker is None or not self._worker.alive:
            load = self.load_spec
            prepared = self.pool.claim(load)
            try:
                if prepared is None:
                    worker = self.pool.take(self.path)
                    hello = worker.receive(STARTUP_TIMEOUT)
                else:
                    worker, hello = prepared
                self.pool.welcome(hello)
                if isinstance(hello.get("error"), dict):
                    worker.kill()
                    self.load_error = hello["error"]
                    self._worker = worker
                    return worker
                if prepared is None:
                    worker.send(load.request(), LOAD_TIMEOUT)
                reply = worker.receive(LOAD_TIMEOUT)
            except WorkerDied as exc:
                self.load_error = {"type": "LoadFailed", "message": f"loading failed: {exc}",
                                   "file": self.path, "line": None}
                raise
            try:
                error = read_load_reply(reply)
            except ProtocolError as exc:  # the submission wrote to the channel itself
                error = {"type": "LoadFailed", "message": unreadable(exc), "file": self.path,
                         "line": None}
            if error is not None:
                worker.release()
                self.load_error = error
            self._worker = worker
        return self._worker

    def load(self) -> dict | None:
        """Load the submission; the error that stops it from being graded, if any."""
        try:
            self._ensure()
        except WorkerDied:
            pass
        return self.load_error

    def call(self, method: str, args: tuple, kwargs: dict | None = None,
             watch: tuple[int, ...] = (), iterate: bool = False,
             timeout: float | None = None,
             while_waiting: Callable[[], None] | None = None) -> CallOutcome:
        """Run a method of the submission; `while_waiting` runs here meanwhile."""
        try:
            worker = self._ensure()
        except WorkerDied as exc:
            return CallOutcome(error={"type": "WorkerDied", "message": str(exc)})
        if self.load_error:
            return CallOutcome(error=self.load_error)
        witness = worker.witness if self.witnessed else None
        message = {"op": "call", "method": method, "args": encode(list(args)),
                   "kwargs": encode(kwargs or {}), "watch": list(watch), "iterate": iterate,
                   "witnessed": witness is not None}
        if witness is not None:
            witness.clear()
            for value in (*args, *(kwargs or {}).values()):
                if isinstance(value, ModelSpec):
                    witness.allow(value)
        limit = timeout if timeout is not None else self.timeout
        started = time.monotonic()
        self.calls += 1
        def left() -> float:
            # The call's own limit, within what is left of the problem's budget.
            spent = time.monotonic() - started
            return max(min(limit, self.budget - self.spent - spent), 0.01)

        try:
            worker.send(message, left())
            try:
                if while_waiting is not None:
                    while_waiting()
            finally:
                # Read the answer even if the grader's side failed, so the
                # conversation stays in step.
                reply = worker.receive(left())
        except WorkerDied as exc:
            self._worker = None
            self.spent += time.monotonic() - started
            if exc.timed_out and self.spent >= self.budget:
                exc = WorkerDied(f"the time budget for this problem ({self.budget:g} seconds "
                                 "for all calls together) is spent", timed_out=True)
            if exc.timed_out:
                self.timed_out = f"{method}(): {exc}"
            return CallOutcome(error=with_limit_named({"type": "WorkerDied", "message": str(exc)},
                                                      getattr(worker, "limits", None)))
        self.spent += time.monotonic() - started
        try:
            outcome = CallOutcome(**read_call_reply(reply))
            outcome.error = with_limit_named(outcome.error, getattr(worker, "limits", None))
            if witness is not None:
                witnessed(outcome, witness, iterate)
            return outcome
        except (ProtocolError, KeyError, TypeError, ValueError) as exc:
            # Possibly a reply the submission forged: the real one may still be on
            # its way, so this worker is out of step and goes, as if it had died.
            worker.kill()
            self._worker = None
            return CallOutcome(error={"type": "WorkerDied", "message": unreadable(exc)})

    def iterate(self, method: str, args: tuple,
                timeout: float | None = None) -> Iterator[Any]:
        """Yield a generator method's items as the worker produces them.

        Raises WorkerDied, or RuntimeError with the learner's error in one line.
        """
        worker = self._ensure()
        if self.load_error:
            raise RuntimeError(self.load_error.get("message", "cannot load"))
        limit = timeout if timeout is not None else self.timeout
        witness = worker.witness if self.witnessed else None
        if witness is not None:
            witness.clear()
            for value in args:
                if isinstance(value, ModelSpec):
                    witness.allow(value)
        limits = getattr(worker, "limits", None)

        def ask(message: dict) -> dict:
            try:
                return worker.request(message, limit)
            except WorkerDied as exc:  # named as call() names it
                died = with_limit_named({"message": str(exc)}, limits) or {}
                raise WorkerDied(died.get("message", str(exc)), exc.timed_out) from None

        reply = ask({"op": "start", "method": method, "args": encode(list(args)),
                     "witnessed": witness is not None})
        try:
            # `start` answers as `load` does. An item made while a tree-wide limit
            # was reached fails the stream: part of its work may be missing.
            error = with_limit_named(read_load_reply(reply), limits)
            while error is None:
                kind, value = read_item_reply(ask({"op": "next"}))
                error = with_limit_named(value if kind == "error" else None, limits)
                if error is not None:
                    break
                if kind == "done":
                    return
                yield value
        except ProtocolError as exc:
            worker.kill()
            self._worker = None
            raise WorkerDied(unreadable(exc)) from None
        raise RuntimeError(f"{error.get('type', 'Error')}: {error.get('message', '')}")

    def close(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None
