"""The pool that hands out fresh workers, forked from a fork server where the
system allows, and starts them ahead of their first call."""

from __future__ import annotations

import os
import queue
import socket
import sys
import tempfile
import threading
from dataclasses import dataclass

from grader.sandbox.host.channel import WorkerDied
from grader.sandbox.host.forkserver_client import LOAD_TIMEOUT, STARTUP_TIMEOUT, ForkServerClient
from grader.sandbox.host.handles import HostedWorker, SpawnedWorker, SpawnHost, WorkerHandle
from grader.sandbox.host.scratch_folders import new_scratch_root, remove_tree, torch_cache_in
from grader.sandbox.wire.limits import Limits

SPAWN_VARIABLE = "GPT_KATA_SPAWN_WORKERS"


class WorkerPool:
    """Hands out fresh workers, forked from a fork server where the system allows.

    `sandbox` isolates each worker with every layer the system offers (Linux
    only); `layers` then says which ones ran.
    """

    def __init__(self, debug: bool = False, fork: bool | None = None,
                 sandbox: Limits | None = None,
                 server_control: socket.socket | None = None,
                 forwards: str | None = None) -> None:
        """`server_control`: a fork server spawned for this pool (`ForkServerClient.spawn`);
        `forwards`: the folder of the kept forward passes its workers, forked or spawned,
        look windows up in (grader/model/forward_store.py), for a practice grade."""
        self.debug = debug
        self.forwards = forwards
        self.server_control = server_control
        linux = sys.platform.startswith("linux")
        if fork is None:
            # SPAWN_VARIABLE=1 takes the path other systems take, to test it on Linux.
            fork = linux and os.environ.get(SPAWN_VARIABLE) != "1"
        self.use_fork = fork
        self.scratch_root: str | None = None  # spawned workers' scratch folders
        self.sandbox = sandbox if linux else None
        self.server: ForkServerClient | None = None
        # A second server, spawned from the first for the workers that train: see
        # `_training_server`. None until a grade with such a problem asks for it.
        self.training: ForkServerClient | None = None
        self._training_asked = False
        self.workers: list[WorkerHandle] = []
        self.layers: list[str] = []
        self._lock = threading.Lock()
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
                self.server = ForkServerClient(self.debug, self.sandbox, self.server_control,
                                               forwards=self.forwards)
            except OSError:
                self.use_fork = False

    def take(self, submission: str, models: bool = True, trains: bool = False) -> WorkerHandle:
        """A worker for `submission`; with `models`, one that holds the grader's models,
        and with `trains`, one forked after the server imported what training needs."""
        self.start()
        if self.server is None and self.hosting:
            return HostedWorker(self._host())
        server = self.training if trains and self.training is not None else self.server
        worker = (server.fork(submission, models, trains) if server is not None
                  else self._spawned_worker())
        with self._lock:
            self.workers = [w for w in self.workers if w.alive] + [worker]
        return worker

    def _spawned_worker(self) -> SpawnedWorker:
        with self._lock:  # a folder in the pool's scratch root
            scratch = tempfile.mkdtemp(prefix="worker-", dir=self._own_scratch_root())
        return SpawnedWorker(scratch, torch_cache_in(os.path.dirname(scratch)), self.debug,
                             self.forwards)

    def torch_cache(self) -> str:
        """Where this grader keeps torch's cache while it grades (see
        `scratch_folders.torch_cache_in`): in its fork server's scratch root, removed
        with the server (even when the grader that started it is killed), or else
        in the pool's own."""
        self.start()
        server = self.server
        if server is not None:
            return torch_cache_in(server.scratch_root)
        with self._lock:
            return torch_cache_in(self._own_scratch_root())

    def _own_scratch_root(self) -> str:
        """The pool's own scratch root, made on first use; the lock is held."""
        if self.scratch_root is None:
            self.scratch_root = new_scratch_root()
        return self.scratch_root

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
        worker = self._spawned_worker()
        host = SpawnHost(worker)
        with self._lock:
            self.host = host
            self.workers = [w for w in self.workers if w.alive] + [worker]
        return host

    def _training_server(self, server: ForkServerClient) -> ForkServerClient | None:
        """The server that forks the workers that train, spawned from `server` on the
        first call: it imports what training needs (torch._dynamo, 0.9 s here) in a
        process of its own, while `server` goes on forking the other workers. Asked
        of `server` itself, that import held up every fork after the first training
        problem's (all nineteen starters of tracks 3 and 4 waited for it). None where
        it cannot be spawned: `server` then imports it, as before."""
        with self._lock:
            if self._training_asked or self.server is not server:
                return self.training
            self._training_asked = True
        try:
            control, _pid = server.spawn(trains=True)  # it ends when its control closes
        except (WorkerDied, OSError, ValueError, KeyError):
            return None
        try:
            # Its workers' folders in `server`'s: removed with them even when the
            # grader is killed (no one is left to close this client then).
            training = ForkServerClient(self.debug, self.sandbox, control,
                                        inside=server.scratch_root, forwards=self.forwards)
        except OSError:  # its scratch folder, say: the server ends with its control
            control.close()
            return None
        with self._lock:
            if self.server is not server:  # the pool closed meanwhile
                training.close()
                return None
            self.training = training
        return training

    def _prepare(self, server: ForkServerClient, slots: dict[Load, queue.Queue]) -> None:
        # Each worker is forked before the one before it is awaited: a new worker sets
        # up its sandbox (about 30 ms) while the server forks the next (about 20 ms),
        # instead of one after the other. Those that train come last, from their own
        # server, which is made ready meanwhile.
        training = (self._training_server(server) if any(load.trains for load in slots)
                    else None)
        started: tuple[Load, queue.Queue, WorkerHandle | None] | None = None
        for load in sorted(slots, key=lambda load: load.trains):
            slot = slots[load]
            source = training if load.trains and training is not None else server
            try:
                worker = source.fork(load.path, load.models, load.trains)
            except (WorkerDied, OSError, ValueError):
                worker = None
            with self._lock:
                closed = self.server is not server
                if worker is not None and not closed:
                    self.workers.append(worker)
            if closed:  # the pool closed meanwhile: nobody will claim them
                for handle in (worker, started[2] if started else None):
                    if handle is not None:
                        handle.kill()
                return
            if started is not None:
                self._greet(*started)
            started = (load, slot, worker)
        if started is not None:
            self._greet(*started)

    @staticmethod
    def _greet(load: Load, slot: queue.Queue, worker: WorkerHandle | None) -> None:
        """Wait for a prepared worker's hello, ask it to load, and hand it over."""
        if worker is None:
            slot.put(None)  # the first call starts one the usual way
            return
        try:
            hello = worker.receive(STARTUP_TIMEOUT)
            if not isinstance(hello.get("error"), dict):
                worker.send(load.request(), LOAD_TIMEOUT)
            slot.put((worker, hello))
        except (WorkerDied, OSError, ValueError):
            slot.put(None)

    def claim(self, load: Load) -> tuple[WorkerHandle, dict] | None:
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
        return any(server is not None and (server.broken or not server.alive)
                   for server in (self.server, self.training))

    def welcome(self, hello: dict) -> None:
        """Note which sandbox layers a new worker reports."""
        self.layers = [str(layer) for layer in hello.get("isolation", [])][:20]

    def usable(self) -> bool:
        """Whether the pool can hand out workers still: its fork servers, if it started
        any, have not died (a session's pool is then made anew)."""
        return all(server is None or server.alive for server in (self.server, self.training))

    def end_workers(self) -> None:
        """End every worker handed out so far, and keep the fork server for the next grade."""
        with self._lock:
            workers, self.workers = self.workers, []
            self.host = None
        for worker in workers:
            worker.kill()

    def close(self) -> None:
        self._prepared.clear()
        with self._lock:
            server, self.server = self.server, None
            training, self.training = self.training, None
            self._training_asked = False
        self.end_workers()
        for each in (training, server):
            if each is not None:
                each.close()
        if self.scratch_root is not None:
            remove_tree(self.scratch_root)
            self.scratch_root = None

    def __enter__(self) -> WorkerPool:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Load:
    """What a worker loads: a submission file's class, and how it is called."""

    path: str  # absolute
    class_name: str
    methods: tuple[str, ...]
    module: bool = False  # an nn.Module the grader builds, instead of a Solution
    # Whether the worker gets the grader's models (the problem hands the learner a
    # model); without them, none of the reference models' code is in its memory.
    models: bool = True
    # Whether it trains (builds a torch optimizer): see ForkServerClient.fork.
    trains: bool = False

    @classmethod
    def of(cls, path: str, class_name: str, methods: list[str] | tuple[str, ...],
           module: bool = False, models: bool = True, trains: bool = False) -> Load:
        return cls(os.path.abspath(path), class_name, tuple(methods), module, models, trains)

    def request(self) -> dict:
        return {"op": "load", "path": self.path, "class": self.class_name,
                "methods": list(self.methods), "module": self.module}
