"""The fork server: `python -m grader.sandbox.host.forkserver FD`.

Importing torch takes a second or two, and a grade needs a fresh process per
submission (and a new one after every crash or time-out). This process imports
torch and the worker's code once, loads the shipped model, and then forks a
worker per request: a fork costs milliseconds and shares the loaded pages.

It talks to the grader over the Unix socket it is given: a request carries one
end of a new socket pair, which becomes the forked worker's channel. The server
also ends workers (a worker may sit in its own PID namespace, where the grader
cannot name it) and reports how they ended.

A gradebook grades many learners, each in a grader of its own. Rather than
start a fork server per learner (a torch import each), it starts one and asks
it to `spawn` a server per learner: a fork of this one, with nothing in it but
what `preload` loaded, in user, PID, network and mount namespaces of its own
(with a /proc of its own) where the system allows, so that everything it forked
ends when it does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import time
import traceback
from typing import Any

from grader.sandbox.host.ending import wait_for, wait_then_kill
from grader.sandbox.worker.layers import syscalls
from grader.sandbox.worker.layers.scratch import map_own_ids
from grader.sandbox.worker.layers.syscalls import (
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUSER,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
)

MAX_REQUEST = 64 * 1024
# Seconds the parent of a worker's PID namespace gets to end the worker's tree, once
# asked; past that (it was stopped from outside, say) it is killed with its group.
TREE_WAIT = 5.0


def preload() -> None:
    """Everything every worker needs, loaded before any submission runs, and none of
    the grader's models: a worker that is not handed a model must not hold their code
    in memory, where no file sandbox can keep a submission from it (a learner's
    attention layer could hand back the reference's own). `preload_models` adds them
    in the workers that are handed one."""
    from grader.importing import without_collections

    with without_collections():
        _preload()


def _preload() -> None:
    import torch

    torch.set_num_threads(1)  # no thread pool exists yet, so forking stays safe
    # The worker may not read the grader's folders once isolated, so every module
    # it can need is imported now.
    import grader.model.parts  # noqa: F401 - a module problem's driver (configs only)
    import grader.reuse  # noqa: F401 - a submission may use the learner's earlier solutions
    import grader.sandbox.worker.harnesses  # noqa: F401
    import grader.sandbox.worker.isolation  # noqa: F401
    import grader.sandbox.worker.remote_model  # noqa: F401 - a witnessed check's model
    import grader.sandbox.worker.serve  # noqa: F401
    from grader.locale import catalog, language
    from grader.model import artifacts

    catalog(language())  # what the worker says, in the learner's language, read now

    # The shipped weights as tensors, read from data/ now: the worker may not read
    # them later, and a model is built from them only in a worker handed one.
    artifacts.shipped_weights()
    # Workers share these pages with the server: a collection in a worker that
    # walked them would copy them all, and would take a tenth of a second.
    import gc

    gc.freeze()


def preload_models(forwards: str | None = None) -> None:
    """The grader's models, in a forked worker that is handed one, before its sandbox
    is set up: their modules, the shipped models built from the weights read, and,
    for a practice grade, the kept forward passes (in the folder `forwards`, which the
    sandbox will not let it open later) mapped to look windows up in."""
    import grader.model.memo  # noqa: F401
    import grader.model.yours  # noqa: F401 - `talk --yours` builds the learner's GPT
    from grader.model import artifacts, forward_store

    if isinstance(forwards, str):
        from pathlib import Path

        forward_store.use(forward_store.store_path(Path(forwards)))
    artifacts.shipped_model()
    try:
        artifacts.shipped_llama()  # the shipped modern model, for `talk --model modern`
    except artifacts.MissingDataError:
        pass  # a copy without it: only the modern model's own commands say so


def preload_training() -> None:
    """What a torch optimizer's construction imports (torch._dynamo: hundreds of
    modules, over half a second), for a worker that trains. Imported here once, on the
    first such request, and not in `preload`: a grade without training would pay for
    it; a grade with it pays once, while the grader works on the problems before."""
    import gc

    from grader.importing import without_collections

    with without_collections():
        import torch._dynamo  # noqa: F401

    gc.freeze()  # as in preload: the new pages stay shared with the workers


class ForkServer:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.ended: dict[int, int] = {}
        # What this server forked and has not ended, with each worker's scratch
        # folder: all of it goes when the server does.
        self.children: dict[int, str | None] = {}
        # Forked for an isolated worker: each is the parent of its worker's PID
        # namespace, and ends the worker when asked (see `own_pid_namespace`).
        self.isolated: set[int] = set()

    def serve(self) -> None:
        try:
            self._serve()
        finally:
            self.end_all()

    def _serve(self) -> None:
        self.reply({"ready": True})
        while True:
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.control, MAX_REQUEST, 2)
            except OSError:
                return
            if not data:
                return  # the grader has gone: so do we, and our namespace with us
            request = json.loads(data)
            op = request.get("op")
            if op == "fork" and len(fds) == 2:
                self.reply({"pid": self.fork(fds[0], fds[1], request)})
            elif op == "spawn" and len(fds) == 1:
                self.reply({"pid": self.spawn(fds[0], bool(request.get("isolate")),
                                              bool(request.get("trains")))})
            elif op == "end":
                self.reply({"status": self.end(int(request["pid"]),
                                               float(request.get("grace", 0)))})
            else:
                for fd in fds:
                    os.close(fd)
                self.reply({"error": f"unknown request {op!r}"})

    def reply(self, message: dict[str, Any]) -> None:
        self.control.sendall(json.dumps(message).encode() + b"\n")

    def fork(self, channel_fd: int, witness_fd: int, request: dict[str, Any]) -> int:
        if request.get("trains"):
            preload_training()  # a second time costs a dictionary lookup
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                self.control.close()
                code = run_worker(channel_fd, witness_fd, request)
            except BaseException:  # noqa: BLE001 - shown with GPT_KATA_DEBUG, then exit 1
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(channel_fd)
        os.close(witness_fd)
        scratch = request.get("scratch")
        self.children[pid] = scratch if isinstance(scratch, str) else None
        if request.get("isolate"):
            self.isolated.add(pid)
        return pid

    def spawn(self, control_fd: int, isolate: bool, trains: bool = False) -> int:
        """Fork a fork server of its own for one grader, served over `control_fd`; with
        `trains`, one that imports what training needs before it says it is ready,
        while this one goes on forking."""
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                self.control.close()
                os.setsid()  # so that ending its group ends the namespace's first process too
                if isolate:
                    # Network and mount namespaces too where the system gives them,
                    # and with the latter a /proc that shows only this grade's processes.
                    if own_pid_namespace(CLONE_NEWNET | CLONE_NEWNS):
                        mount_proc()
                    else:
                        own_pid_namespace(CLONE_NEWNET) or own_pid_namespace()
                if trains:
                    preload_training()
                ForkServer(socket.socket(fileno=control_fd)).serve()
                code = 0
            except BaseException:  # noqa: BLE001 - shown with GPT_KATA_DEBUG, then exit 1
                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(control_fd)
        self.children[pid] = None
        return pid

    def end_all(self) -> None:
        """End every process this server started, then remove their scratch folders.

        The grader may have been killed without a word: nothing it started may be
        left running or left on disk.
        """
        if os.getpid() == 1:
            # PID 1 of a namespace of our own: every process in it, however it
            # detached, and nothing outside it.
            with contextlib.suppress(OSError):
                os.kill(-1, signal.SIGKILL)
        children = dict(self.children)
        for pid in children:
            self.end(pid, 0.0)
        reap_all()
        for scratch in children.values():
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)

    def end(self, pid: int, grace: float) -> int | None:
        """Wait up to `grace` seconds for the worker to exit, then end it: an isolated
        one through the parent of its PID namespace, which exits only once every
        process of the namespace is gone (so the grader's wait is for the whole tree);
        then, or if that parent does not answer (stopped from outside), kill its group."""
        self.children.pop(pid, None)
        isolated = pid in self.isolated
        self.isolated.discard(pid)
        if not isolated:
            return wait_then_kill(pid, grace)
        ended, status = wait_for(pid, grace)
        if ended:
            return status
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
        return wait_then_kill(pid, TREE_WAIT)


def reap_all(seconds: float = 5.0) -> None:
    """Reap every child (as PID 1, every orphan of the namespace too), for a while."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            time.sleep(0.01)


def own_pid_namespace(more: int = 0) -> bool:
    """Continue as PID 1 of a new PID namespace; False where the system refuses.

    When PID 1 of a namespace ends, the kernel ends every process in it, however
    it detached. `more` names further namespaces to enter (CLONE_NEWNET...). This
    process's user and group ids are mapped into the new user namespace, without
    which nothing in it may make a user namespace of its own.
    The process that called this stays behind as a plain parent:
    it waits, passes on how the worker ended, and if it is killed itself, the
    worker dies with it (the sandbox sets a parent-death signal).
    """
    ids = os.geteuid(), os.getegid()
    libc = syscalls.libc()
    # A user namespace of its own gives the right to make a PID namespace.
    if libc is None or libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | more) != 0:
        return False
    # Best effort: a worker that then cannot make its PID namespace says so in its layers.
    with contextlib.suppress(OSError):
        map_own_ids(*ids)
    pid = os.fork()
    if pid == 0:
        return True
    # The server's way to end the worker: SIGTERM here ends it, and with it, PID 1
    # of its namespace, every process in there. Its wait returns only once they are
    # all gone, and this process exits as the worker did.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: os.kill(pid, signal.SIGKILL))
    _done, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        # SIGKILL (how the SIGTERM above ends it) takes no handler, and needs none.
        with contextlib.suppress(OSError, ValueError):
            signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def mount_proc() -> bool:
    """Mount a /proc for this PID namespace, in this process's own mount namespace."""
    libc = syscalls.libc()
    return libc is not None and libc.mount(b"proc", b"/proc", b"proc",
                                           MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0


def run_worker(channel_fd: int, witness_fd: int, request: dict[str, Any]) -> int:
    """The forked child: its own session, quiet streams, its sandbox, then serve."""
    from grader.sandbox.worker.serve import quiet_standard_streams, serve

    os.setsid()  # its own process group, so ending it ends what it started
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # Its ids mapped: the sandbox then mounts the worker's scratch tmpfs, and unmaps them.
    pid_namespace = bool(request.get("isolate")) and own_pid_namespace()
    channel = socket.socket(fileno=channel_fd)
    reader, writer = channel.makefile("rb"), channel.makefile("wb")
    witness = socket.socket(fileno=witness_fd)
    witness_ends = witness.makefile("rb"), witness.makefile("wb")
    quiet_standard_streams(keep_stderr=bool(request.get("debug")))
    models = bool(request.get("models", True))
    if models:
        preload_models(request.get("forwards"))
    hello: dict[str, Any] = {"isolation": []}
    policy = None  # the worker names a limit the submission reaches from it
    if request.get("isolate"):
        from grader.sandbox.worker.isolation import isolate
        from grader.sandbox.worker.layers.policy import Policy
        from grader.sandbox.worker.machine import tree_options

        # A training run asks for more CPU time than grading allows.
        cpu = {"cpu_seconds": request["cpu_seconds"]} if "cpu_seconds" in request else {}
        policy = Policy.for_submission(request["path"], request["scratch"],
                                       memory_bytes=request.get("memory_bytes"), **cpu,
                                       **tree_options(request))
        try:
            hello["isolation"] = isolate(policy) + (
                ["worker-pid-namespace"] if pid_namespace else [])
        except OSError as exc:
            # Running unprotected would be worse than not running at all.
            hello = {"error": {"type": "LoadFailed",
                               "message": f"the sandbox could not be set up: {exc}"}}
    serve(reader, writer, hello, policy=policy, witness=witness_ends, models=models)
    return 0


def main() -> None:
    """`forkserver FD [SCRATCH_ROOT]`: serve over FD; remove SCRATCH_ROOT at the end."""
    from grader.sandbox.worker.layers.namespaces import die_with_launcher

    die_with_launcher()  # the launcher's own signal is lost with an unprivileged real uid
    control = socket.socket(fileno=int(sys.argv[1]))
    scratch_root = sys.argv[2] if len(sys.argv) > 2 else None
    # A Ctrl-C in the terminal reaches the whole foreground group; the grader
    # decides what happens then, not us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        preload()
        ForkServer(control).serve()
    finally:
        if scratch_root:
            # The grader removes it too, unless it was killed: then only we can.
            shutil.rmtree(scratch_root, ignore_errors=True)


if __name__ == "__main__":
    main()
