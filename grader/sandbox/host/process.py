"""The grader's side of the worker processes: one submission loaded in its own
worker, called under time limits.

Every call has a wall-clock limit. A worker that hangs, crashes or exits is
ended and replaced, and the call fails with a plain message; grading goes on.

On Linux, workers are forked from a fork server that has imported torch once
(`grader.sandbox.host.forkserver`, asked by `grader.sandbox.host.forkserver_client`), so a
new worker costs milliseconds. Elsewhere each worker is a fresh
`python -m grader.sandbox.worker.serve`; a grade's workers are one such process, which
loads each problem's submission in turn (`grader.sandbox.host.handles.SpawnHost`).
The pool that hands them out is `grader.sandbox.host.pool`; the channel to each,
`grader.sandbox.host.channel`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from grader.locale import tr
from grader.model.spec import ModelSpec
from grader.sandbox.host.channel import WorkerDied
from grader.sandbox.host.forkserver_client import LOAD_TIMEOUT, STARTUP_TIMEOUT
from grader.sandbox.host.handles import WorkerHandle
from grader.sandbox.host.pool import Load, WorkerPool
from grader.sandbox.host.witness import Witness
from grader.sandbox.wire.encoding import ProtocolError, encode
from grader.sandbox.wire.limits import DEFAULTS, Limits
from grader.sandbox.wire.printed import Printed
from grader.sandbox.wire.replies import (
    read_call_reply,
    read_item_reply,
    read_load_reply,
    unreadable,
)
from grader.sandbox.worker.layers.cgroups import with_limit_named


@dataclass
class CallOutcome:
    """What a submission's call produced: a result or an error, plus side effects."""

    result: Any = None
    error: dict | None = None
    after: dict[int, Any] | None = None
    shared: list[int] = field(default_factory=list)  # inputs the result is, not a new tensor
    model_changed: bool = False
    model_calls: list | None = None
    # Each witnessed forward pass: its token ids and its last position's logits.
    model_passes: list | None = None
    # What the call printed, as the worker cut it (grader/sandbox/wire/printed.py).
    output: Printed = field(default_factory=Printed)


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


class SubmissionProcess:
    """One submission file, loaded in its own worker; restarted if it dies."""

    def __init__(self, path: str, class_name: str, methods: list[str], pool: WorkerPool,
                 limits: Limits = DEFAULTS, witnessed: bool = False,
                 module: bool = False, models: bool = True, trains: bool = False) -> None:
        self.path = os.path.abspath(path)  # a sandboxed worker runs in its scratch folder
        # module: the class is a torch.nn.Module, built by each call (grader/model/parts.py).
        # models: the worker is handed the grader's models (the problem takes a model);
        # without them it holds none of their code. trains: it builds a torch optimizer.
        self.load_spec = Load.of(self.path, class_name, methods, module, models, trains)
        self.pool = pool
        # The problem's budget is for all calls together: calls that each stay just
        # under the per-call limit must not stretch one problem's grade without end.
        self.limits = limits
        self.spent = 0.0
        self.calls = 0  # calls sent to the submission so far
        # Run the model's forward passes in the grader, which logs them: for
        # checks that judge how the model is used.
        self.witnessed = witnessed
        self._worker: WorkerHandle | None = None
        self.load_error: dict | None = None
        # Set by the first call that runs out of time: later checks of the same
        # problem would most likely hang too, so they are not run.
        self.timed_out: str | None = None
        self.timed_out_busy = False  # and it may have been only the busy machine's doing

    def _ensure(self) -> WorkerHandle:
        if self._worker is None or not self._worker.alive:
            load = self.load_spec
            prepared = self.pool.claim(load)
            try:
                if prepared is None:
                    worker = self.pool.take(self.path, load.models, load.trains)
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
                self.load_error = {"type": "LoadFailed",
                                   "message": tr("loading failed: {error}", error=exc),
                                   "file": self.path, "line": None}
                if exc.busy:  # an import that computed whenever the busy machine let it
                    self.load_error["busy"] = True
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

    def _witness(self, worker: WorkerHandle, values: Iterable[Any]) -> Witness | None:
        """The call's witness, if it is witnessed: cleared, and given the models in `values`."""
        witness = worker.witness if self.witnessed else None
        if witness is not None:
            witness.clear()
            for value in values:
                if isinstance(value, ModelSpec):
                    witness.allow(value)
        return witness

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
        if self.load_spec.module:
            # Weights named by a description are made here: the worker of a module
            # problem holds no model of the grader's to make them from.
            from grader.model.parts import resolved

            made = tuple(resolved(a) for a in args)
            # Weights made here are copied into the module by the driver, out of the
            # learner's reach: there is nothing of the caller's to watch in them.
            watch = tuple(i for i in watch if made[i] is args[i])
            args = made
        witness = self._witness(worker, (*args, *(kwargs or {}).values()))
        message = {"op": "call", "method": method, "args": encode(list(args)),
                   "kwargs": encode(kwargs or {}), "watch": list(watch), "iterate": iterate,
                   "witnessed": witness is not None}
        limit = timeout if timeout is not None else self.limits.call_timeout
        started = time.monotonic()
        self.calls += 1
        def left() -> float:
            # The call's own limit, within what is left of the problem's budget.
            spent = time.monotonic() - started
            return max(min(limit, self.limits.problem_budget - self.spent - spent), 0.01)

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
            budget = self.limits.problem_budget
            if exc.timed_out and self.spent >= budget:
                exc = WorkerDied(tr("the time budget for this problem ({budget:g} seconds "
                                    "for all calls together) is spent: the calls are far "
                                    "slower than the problem needs (or give them more time: "
                                    "--budget {longer:g})", budget=budget, longer=2 * budget),
                                 timed_out=True, busy=exc.busy)
            if exc.timed_out:
                self.timed_out = f"{method}(): {exc}"
                self.timed_out_busy = exc.busy
            died = {"type": "WorkerDied", "message": str(exc)}
            if exc.busy:
                died["busy"] = True
            return CallOutcome(error=with_limit_named(died, getattr(worker, "limits", None)))
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
        limit = timeout if timeout is not None else self.limits.call_timeout
        witness = self._witness(worker, args)
        limits = getattr(worker, "limits", None)

        def ask(message: dict) -> dict:
            try:
                return worker.request(message, limit)
            except WorkerDied as exc:  # named as call() names it
                died = with_limit_named({"message": str(exc)}, limits) or {}
                raise WorkerDied(died.get("message", str(exc)), exc.timed_out, exc.busy) from None

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

    @property
    def shares_its_worker(self) -> bool:
        """Whether its worker serves the grade's next submissions too (a SpawnHost's)."""
        return self._worker is not None and self._worker.shared

    def close(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker = None
