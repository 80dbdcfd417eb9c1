"""The process a submission runs in: `python -m grader.sandbox.worker.serve`.

The grader never runs a learner's code in its own process. This worker loads one
submission file, answers calls on its `Solution`, and reports results and errors
as plain data. It talks over a private copy of its original stdout, so whatever
the submission prints or reads cannot corrupt the conversation. The models its calls
are handed are grader/sandbox/worker/worker_models.py's; its errors, as data,
grader/sandbox/worker/describe.py's.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

# Also before the sandbox: what the worker reads, describes, builds and says.
from grader.locale import tr
from grader.reuse import source_spec
from grader.sandbox.wire.encoding import Unencodable, decode, encode, same_memory
from grader.sandbox.wire.frames import read_frame, write_frame
from grader.sandbox.wire.limits import reseed_global_generators
from grader.sandbox.wire.printed import CALL_OUTPUT_KEPT, CALL_OUTPUT_LIMIT, Capture, clip
from grader.sandbox.worker.describe import describe_error
from grader.sandbox.worker.harness_ref import harness_name, learners_name, run_harness
from grader.sandbox.worker.held import reference_code_held
from grader.sandbox.worker.worker_models import ModelRefused, WorkerModels


def printed(captured: Capture) -> dict[str, Any]:
    """What a call printed, cut to CALL_OUTPUT_LIMIT at a line end, as the reply's fields:
    the lines kept, and how many were left out after them (`output_cut`), so that the
    report can say how many there were."""
    kept, cut = clip(captured.printed(), CALL_OUTPUT_LIMIT).kept()
    return {"output": kept, "output_cut": cut}


class Nowhere(io.TextIOBase):
    """A stdout that keeps nothing of what is printed to it, however much."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"string argument expected, got '{type(text).__name__}'")
        return len(text)


def quiet_standard_streams(keep_stderr: bool = False) -> None:
    """Give the submission an empty stdin and a stdout that goes nowhere.

    What it prints is captured per call; what it writes to the raw descriptors
    must not reach the grader's terminal or the protocol channel.
    """
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    if not keep_stderr:
        os.dup2(devnull, 2)
    os.close(devnull)
    sys.stdin = io.StringIO("")


def _private_channels() -> tuple[io.BufferedReader, io.BufferedWriter]:
    """Keep the protocol pipes (our stdin and stdout) for ourselves."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    quiet_standard_streams(keep_stderr=True)
    return proto_in, proto_out


class WorkerLoop:
    """The worker's side: loads one submission and answers the grader's requests."""

    def __init__(self, policy: Any = None, models: bool = True) -> None:
        self.policy = policy  # the sandbox's limits, to name one the submission reaches
        # Handed no model, it must hold none of the grader's reference code (held.py).
        self.holds_models = models
        self.path: str | None = None
        self.solution: Any = None
        self.module: Any = None
        self.models = WorkerModels(policy)
        self.iterator: Any = None
        # A worker that loads one submission after another (off Linux) comes back to
        # this state before each (grader/sandbox/worker/baseline.py).
        self.baseline: Any = None
        self.loads = 0

    def forget_submission(self) -> None:
        """Undo what the submission loaded before may have changed, before the next."""
        from grader.sandbox.worker.baseline import restore

        self.solution = self.module = self.iterator = None
        # The process's state first: forgetting the models imports the grader's own
        # modules, which a sys.path the submission emptied would not find.
        restore(self.baseline)
        # Models it was handed may carry its changes beyond their weights.
        self.models.forget_preloaded()
        self.models.calls.clear()

    def load(self, path: str, class_name: str, methods: list[str],
             nn_module: bool = False) -> dict[str, Any]:
        """Load the submission and make its Solution; for an `nn_module` problem the
        class is a torch.nn.Module that each call builds afresh from a config."""
        if self.loads and self.baseline is not None:
            self.forget_submission()
        self.loads += 1
        self.path = path
        if not self.holds_models and (held := reference_code_held()):
            # The grader's own fault, said as such: grading here could be faked.
            return {"error": {"type": "LoadFailed",
                              "message": tr("the grader's worker holds its reference code "
                                            "({held}), so this grade could be faked; it was "
                                            "not run (a bug of the grader's: report it)",
                                            held=", ".join(held[:5]))}}
        try:
            spec = source_spec("submission", path)
            if spec is None or spec.loader is None:
                return {"error": {"type": "ImportError",
                                  "message": tr("cannot load {path}", path=path),
                                  "file": path, "line": None}}
            module = importlib.util.module_from_spec(spec)
            sys.modules["submission"] = module
            reseed_global_generators()  # what its module-level code draws too
            with contextlib.redirect_stdout(Nowhere()):
                spec.loader.exec_module(module)
            self.module = module
            cls = getattr(module, class_name, None)
            if cls is None:
                return {"error": {"type": "MissingClass", "file": path, "line": None,
                                  "message": tr("no class {name} in {file}", name=class_name,
                                                file=Path(path).name)}}
            for name in methods:
                if not callable(getattr(cls, name, None)):
                    return {"error": {"type": "MissingMethod", "file": path, "line": None,
                                      "message": tr("class {name} has no method {method}()",
                                                    name=class_name, method=name)}}
            if nn_module:
                from grader.model.parts import ModuleDriver

                self.solution = ModuleDriver(cls)
                return {"ok": True}
            with contextlib.redirect_stdout(Nowhere()):
                self.solution = cls()
        except BaseException as exc:  # noqa: BLE001 - any failure of learner code is reported
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"error": describe_error(exc, path, self.policy)}
        return {"ok": True}

    def call(
        self, method: str, args: list, kwargs: dict, watch: list[int], iterate: bool = False,
        witnessed: bool = False,
    ) -> dict[str, Any]:
        import torch

        from grader.sandbox.worker.remote_model import announce_chunk

        witness = self.models.witness if witnessed else None
        try:
            args = [self.models.materialise(a, witness is not None) for a in args]
            kwargs = {k: self.models.materialise(v, witness is not None)
                      for k, v in kwargs.items()}
        except ModelRefused as exc:
            return {"error": {"type": "ModelRefused", "message": str(exc)}}
        models = [a for a in [*args, *kwargs.values()] if isinstance(a, torch.nn.Module)]
        self.models.calls.clear()
        captured = Capture(CALL_OUTPUT_KEPT)
        try:
            with contextlib.redirect_stdout(captured):
                if (harness := harness_name(method)) is not None:
                    # A problem whose answer is not a Solution method (a class of
                    # its own, driven step by step) is exercised by trusted code.
                    result = run_harness(harness, self.module, *args, **kwargs)
                else:
                    result = getattr(self.solution, method)(*args, **kwargs)
                if iterate and witness is not None:
                    # The witness counts the calls made before each chunk came out.
                    chunks = []
                    for chunk in result:
                        announce_chunk(*witness)
                        chunks.append([chunk, 0])
                    result = chunks
                elif iterate:
                    # A generator runs lazily: record how many model calls had been
                    # made when each chunk came out, to tell streaming from batching.
                    result = [[chunk, len(self.models.calls)] for chunk in result]
        except BaseException as exc:  # noqa: BLE001 - learner errors are data, not crashes
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"error": describe_error(exc, self.path or "", self.policy),
                    **printed(captured)}
        # model() restored each model to its pristine weights before the call.
        model_changed = self.models.changed(models)
        try:
            encoded = encode(result)
            # The arguments may hold what the submission put into them.
            after = {str(i): encode(args[i]) for i in watch if i < len(args)}
            # and the result may be one of them, or a view of one: not a new tensor.
            shared = [i for i in watch if i < len(args) and same_memory(result, args[i])]
        except Unencodable as exc:
            return {"error": {"type": "BadResult",
                              "message": tr("{method}() returned {value}, which the grader "
                                            "cannot read; return a str, int, float, list or "
                                            "tensor", method=learners_name(method), value=exc)},
                    **printed(captured)}
        return {
            "ok": True,
            "result": encoded,
            "after": after,
            "shared": shared,
            "model_changed": model_changed,
            "model_calls": self.models.calls[:10_000],
            **printed(captured),
        }

    def start(self, method: str, args: list, witnessed: bool = False) -> dict[str, Any]:
        """Begin a generator method; its items then come one `next` at a time, live."""
        remote = witnessed and self.models.witness is not None
        self.iterator = None
        try:
            models = [self.models.materialise(a, remote) for a in args]
        except ModelRefused as exc:
            return {"error": {"type": "ModelRefused", "message": str(exc)}}
        try:
            with contextlib.redirect_stdout(Nowhere()):
                self.iterator = iter(getattr(self.solution, method)(*models))
        except Exception as exc:  # noqa: BLE001 - learner errors are data
            return {"error": describe_error(exc, self.path or "", self.policy)}
        return {"ok": True}

    def next_item(self) -> dict[str, Any]:
        if self.iterator is None:
            return {"done": True}
        try:
            with contextlib.redirect_stdout(Nowhere()):
                item = next(self.iterator)
            return {"ok": True, "item": encode(item)}
        except StopIteration:
            self.iterator = None
            return {"done": True}
        except Unencodable as exc:
            return {"error": {"type": "BadResult",
                              "message": tr("yielded {value}", value=exc)}}
        except Exception as exc:  # noqa: BLE001
            return {"error": describe_error(exc, self.path or "", self.policy)}


def serve(proto_in: IO[bytes], proto_out: IO[bytes], hello: dict[str, Any] | None = None,
          *, policy: Any = None, witness: tuple[IO[bytes], IO[bytes]] | None = None,
          hosted: bool = False, models: bool = True, forwards: str | None = None) -> None:
    """Answer the grader's requests until it closes the channel.

    `hello` goes with the first message (which sandbox layers are in place); if
    it holds an error, the worker reports it and serves nothing. `policy` is the
    sandbox's (an isolation.Policy), so that errors can name a limit reached.
    `hosted`: it may be asked to load one submission after another. `models`: it
    was handed the grader's models; without them it refuses to load a submission
    while it holds any of the grader's reference code. `forwards`: the folder of a
    practice grade's kept forward passes, for a spawned worker (a forked one is
    handed them by its fork server).
    """
    from grader.importing import without_collections

    with without_collections():  # once, in a spawned worker host; a fork has it already
        import torch

    from grader.locale import catalog, language

    torch.set_num_threads(1)
    catalog(language())  # read before any submission runs (a fork server's is read already)
    if forwards:
        from grader.model import forward_store

        forward_store.use(forward_store.store_path(Path(forwards)))
    worker = WorkerLoop(policy, models)
    worker.models.witness = witness
    if hosted:
        from grader.sandbox.worker.baseline import capture

        worker.baseline = capture()
    write_frame(proto_out, {"ready": True, **(hello or {})})
    if hello and "error" in hello:
        return
    while True:
        message = read_frame(proto_in)
        if message is None:
            return
        op = message.get("op")
        if op == "load":
            reply = worker.load(message["path"], message["class"], message["methods"],
                                bool(message.get("module", False)))
        elif op == "call":
            reply = worker.call(
                message["method"],
                decode(message["args"]),
                decode(message["kwargs"]),
                message.get("watch", []),
                bool(message.get("iterate", False)),
                bool(message.get("witnessed", False)),
            )
        elif op == "start":
            reply = worker.start(message["method"], decode(message["args"]),
                                 bool(message.get("witnessed", False)))
        elif op == "next":
            reply = worker.next_item()
        else:
            reply = {"error": {"type": "ProtocolError", "message": f"unknown op {op!r}"}}
        if worker.baseline is not None:
            from grader.sandbox.worker.baseline import threads_left

            if threads_left(worker.baseline):
                reply["threads_left"] = True  # the host serves no other submission then
        try:
            write_frame(proto_out, reply)
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            # A value encode() let through that msgpack refuses: say so rather than
            # end the worker.
            write_frame(proto_out, {"error": {
                "type": "BadResult",
                "message": tr("the result could not be sent to the grader: {error}",
                              error=f"{type(exc).__name__}: {str(exc)[:200]}")}})


# Seconds between a spawned worker's looks at whether the grader that started it is gone.
PARENT_POLL = 1.0


def end_when_orphaned(parent: int, poll: float = PARENT_POLL) -> None:
    """Wait until this process's parent is no longer `parent`, then end the process.

    A spawned worker leads a session of its own (grader/sandbox/host/ending.py), so
    a grader ended without cleaning up (its terminal closed, SIGHUP; `kill -9`) left
    it running the learner's code: an endless loop spun a core for good. Waiting on
    its channel sees the grader go only between calls. On Linux a forked worker ends
    with its fork server (PR_SET_PDEATHSIG); on Windows the grader's job object ends
    it; an orphan on macOS (and on Linux) gets a new parent, which this notices."""
    while os.getppid() == parent:
        time.sleep(poll)
    os._exit(0)


def main() -> None:
    """A worker started on its own (where there is no fork server): talk over stdin/stdout.
    Its one argument, where given, is the folder of a practice grade's kept passes."""
    threading.Thread(target=end_when_orphaned, args=(os.getppid(),), daemon=True,
                     name="gpt-kata-orphan-watch").start()
    serve(*_private_channels(), hosted=True, forwards=(sys.argv[1:] or [None])[0])


if __name__ == "__main__":
    main()
