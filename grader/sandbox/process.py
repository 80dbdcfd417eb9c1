"""The grader's side of the worker process: start it, talk to it, kill it.

Every call has a wall-clock limit. A worker that hangs, crashes or exits is
killed and replaced, and the call fails with a plain message; grading goes on.
Workers are started ahead of need, so that the next one's `import torch` runs
while the grader is busy with something else.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from grader.sandbox.protocol import ProtocolError, read_frame, write_frame

STARTUP_TIMEOUT = 120.0
LOAD_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 20.0


def call_timeout() -> float:
    """Seconds a single call may take; `gpt-kata grade --timeout` sets it."""
    try:
        return float(os.environ.get("GPT_KATA_CALL_TIMEOUT", DEFAULT_CALL_TIMEOUT))
    except ValueError:
        return DEFAULT_CALL_TIMEOUT


class WorkerDied(Exception):
    """The worker stopped answering: it exited, crashed or ran out of time."""


@dataclass
class WorkerProcess:
    process: subprocess.Popen
    replies: queue.Queue

    @classmethod
    def start(cls) -> WorkerProcess:
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
        debug = bool(os.environ.get("GPT_KATA_DEBUG"))
        process = subprocess.Popen(
            [sys.executable, "-m", "grader.sandbox.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None if debug else subprocess.DEVNULL,
            env=env,
            # Its own process group, so that killing it also kills anything it started.
            start_new_session=os.name == "posix",
        )
        replies: queue.Queue = queue.Queue()
        threading.Thread(target=cls._read, args=(process, replies), daemon=True).start()
        return cls(process, replies)

    @staticmethod
    def _read(process: subprocess.Popen, replies: queue.Queue) -> None:
        try:
            while True:
                message = read_frame(process.stdout)
                replies.put(message)
                if message is None:
                    return
        except (ProtocolError, OSError, ValueError) as exc:
            replies.put(exc)

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> None:
        self._receive(timeout)

    def request(self, message: dict, timeout: float) -> dict:
        self.send(message)
        return self._receive(timeout)

    def send(self, message: dict) -> None:
        try:
            write_frame(self.process.stdin, message)
        except (OSError, ValueError):
            self.kill()
            raise WorkerDied(self._death_reason()) from None

    def receive(self, timeout: float) -> dict:
        return self._receive(timeout)

    def _receive(self, timeout: float) -> dict:
        try:
            reply = self.replies.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise WorkerDied(f"no answer within {timeout:g} seconds (an endless loop?)") from None
        if isinstance(reply, Exception):
            self.kill()
            raise WorkerDied(f"the worker sent something unreadable: {reply}")
        if reply is None:
            self.kill()
            raise WorkerDied(self._death_reason())
        return reply

    def _death_reason(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the worker stopped answering"
        if code < 0:
            return f"the process was killed by signal {-code} (a crash, or out of memory)"
        return f"the process exited with code {code} (sys.exit or os._exit in the submission?)"

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                if os.name == "posix":
                    os.killpg(self.process.pid, 9)
                else:
                    self.process.kill()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass


class WorkerPool:
    """Hands out fresh workers, keeping one started in the background."""

    def __init__(self, spares: int = 1) -> None:
        self._spares: list[WorkerProcess] = []
        self._wanted = spares
        self._live: list[WorkerProcess] = []

    def prestart(self) -> None:
        while len(self._spares) < self._wanted:
            self._spares.append(WorkerProcess.start())

    def take(self) -> WorkerProcess:
        worker = self._spares.pop(0) if self._spares else WorkerProcess.start()
        self.prestart()
        self._live.append(worker)
        return worker

    def close(self) -> None:
        for worker in self._live + self._spares:
            worker.kill()
        self._live.clear()
        self._spares.clear()


POOL = WorkerPool()


@dataclass
class CallOutcome:
    """What a submission's call produced: a result or an error, plus side effects."""

    result: Any = None
    error: dict | None = None
    after: dict[int, Any] | None = None
    model_changed: bool = False
    model_calls: list | None = None
    output: str = ""


class SubmissionProcess:
    """One submission file, loaded in its own worker; restarted if it dies."""

    def __init__(self, path: str, class_name: str, methods: list[str]) -> None:
        self.path = path
        self.class_name = class_name
        self.methods = methods
        self._worker: WorkerProcess | None = None
        self.load_error: dict | None = None

    def _ensure(self) -> WorkerProcess:
        if self._worker is None or self._worker.process.poll() is not None:
            worker = POOL.take()
            try:
                worker.wait_ready()
                reply = worker.request(
                    {"op": "load", "path": self.path, "class": self.class_name,
                     "methods": self.methods},
                    LOAD_TIMEOUT,
                )
            except WorkerDied as exc:
                self.load_error = {"type": "LoadFailed", "message": f"loading failed: {exc}",
                                   "file": self.path, "line": None}
                raise
            if "error" in reply:
                worker.kill()
                self.load_error = reply["error"]
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
        from grader.sandbox.protocol import decode, encode

        try:
            worker = self._ensure()
        except WorkerDied as exc:
            return CallOutcome(error={"type": "WorkerDied", "message": str(exc)})
        if self.load_error:
            return CallOutcome(error=self.load_error)
        message = {"op": "call", "method": method, "args": encode(list(args)),
                   "kwargs": encode(kwargs or {}), "watch": list(watch), "iterate": iterate}
        try:
            worker.send(message)
            try:
                if while_waiting is not None:
                    while_waiting()
            finally:
                # Read the answer even if the grader's side failed, so the
                # conversation stays in step.
                reply = worker.receive(timeout if timeout is not None else call_timeout())
        except WorkerDied as exc:
            self._worker = None
            return CallOutcome(error={"type": "WorkerDied", "message": str(exc)})
        output = str(reply.get("output", ""))
        if "error" in reply:
            return CallOutcome(error=reply["error"], output=output)
        try:
            return CallOutcome(
                result=decode(reply["result"]),
                after={int(k): decode(v) for k, v in reply.get("after", {}).items()},
                model_changed=bool(reply.get("model_changed")),
                model_calls=reply.get("model_calls"),
                output=output,
            )
        except (ProtocolError, KeyError, TypeError, ValueError) as exc:
            return CallOutcome(error={"type": "BadResult",
                                      "message": f"the result could not be read: {exc}"})

    def iterate(self, method: str, args: tuple, timeout: float | None = None):
        """Yield a generator method's items as the worker produces them.

        Raises RuntimeError with the learner's error in one line if it fails.
        """
        from grader.sandbox.protocol import decode, encode

        worker = self._ensure()
        if self.load_error:
            raise RuntimeError(self.load_error.get("message", "cannot load"))
        limit = timeout if timeout is not None else call_timeout()
        reply = worker.request({"op": "start", "method": method,
                                "args": encode(list(args))}, limit)
        while "error" not in reply:
            reply = worker.request({"op": "next"}, limit)
            if reply.get("done"):
                return
            if "error" not in reply:
                yield decode(reply["item"])
        from grader.grading.skeleton import one_line

        raise RuntimeError(one_line(reply["error"]))

    def close(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None
