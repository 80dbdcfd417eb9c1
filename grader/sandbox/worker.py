"""The process a submission runs in: `python -m grader.sandbox.worker`.

The grader never runs a learner's code in its own process. This worker loads one
submission file, answers calls on its `Solution`, and reports results and errors
as plain data. It talks over a private copy of its original stdout, so whatever
the submission prints or reads cannot corrupt the conversation.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import traceback
from pathlib import Path
from typing import IO, Any

# Imported before any sandbox is set up: it only cuts text.
from grader.grading.printed import clip

# Also before the sandbox: a learner's error may name the limit it stands for.
from grader.sandbox.outcome import limit_message

# Characters of what one call printed, and of an error's message, that the worker sends.
CALL_OUTPUT_LIMIT = 4000


def printed(text: str) -> str:
    """What a call printed, cut to CALL_OUTPUT_LIMIT at a line end with a marker that counts
    the lines left out, so that the report can say how many there were."""
    return clip(text, CALL_OUTPUT_LIMIT)


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


def _where(exc: BaseException, path: str) -> tuple[str | None, int | None, str | None]:
    """The deepest frame of the traceback that is in the submission file."""
    found: tuple[str | None, int | None, str | None] = (None, None, None)
    target = os.path.normcase(os.path.abspath(path))
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.normcase(os.path.abspath(frame.filename)) == target:
            found = (frame.filename, frame.lineno, frame.name)
    return found


def _text_of(exc: BaseException) -> str:
    # A learner's exception class may define __str__ to raise: that must not end the worker.
    try:
        return str(exc)
    except Exception:  # noqa: BLE001
        return f"<{type(exc).__name__} whose message cannot be printed>"


def describe_error(exc: BaseException, path: str, policy: Any = None) -> dict[str, Any]:
    """The learner's error as plain data; `limit` names a sandbox limit it stands for."""
    file, line, function = _where(exc, path)
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        file, line, function = exc.filename or path, exc.lineno, None
    frames = [
        f"{Path(f.filename).name}:{f.lineno} in {f.name}: {(f.line or '').strip()}"
        for f in traceback.extract_tb(exc.__traceback__)
        if os.path.normcase(os.path.abspath(f.filename))
        == os.path.normcase(os.path.abspath(path))
    ]
    message = _text_of(exc) if not isinstance(exc, SyntaxError) else (exc.msg or "invalid syntax")
    limit = None
    if policy is not None:
        try:
            limit = limit_message(policy, exc)
        except Exception:  # noqa: BLE001 - it reads str(exc), which the learner defines
            limit = None
    if limit:
        # "MemoryError" alone reads like a bug in the learner's code; the limit
        # is what they need to know, and torch's own text stays for the detail.
        message = f"{limit}" + (f" ({message})" if message else "")
    return {
        "type": type(exc).__name__,
        "message": message[:CALL_OUTPUT_LIMIT],
        "file": file,
        "line": line,
        "function": function,
        "frames": frames[-5:],
        "limit": limit,
    }



def weights_changed(model: Any, saved: dict[str, Any]) -> bool:
    """Whether any of the model's weights differ from `saved`.

    The state dict is built once: built again for every weight, it cost about
    3 ms a call, more than most learners' methods take.
    """
    import torch

    current = model.state_dict()
    return any(not torch.equal(value, current[name]) for name, value in saved.items())

class ModelRefused(Exception):
    """A model this worker must not build, such as a trained run the grader serves."""


class WorkerLoop:
    """The worker's side: loads one submission and answers the grader's requests."""

    def __init__(self, policy: Any = None) -> None:
        self.policy = policy  # the sandbox's limits, to name one the submission reaches
        self.path: str | None = None
        self.solution: Any = None
        self.module: Any = None
        self.models: dict[tuple, Any] = {}
        self.model_calls: list[list[int]] = []
        self.iterator: Any = None
        # The grader's witness of model calls, where the worker was given one.
        self.witness: tuple[IO[bytes], IO[bytes]] | None = None
        # A worker that loads one submission after another (off Linux) comes back to
        # this state before each (grader/sandbox/baseline.py).
        self.baseline: Any = None
        self.loads = 0

    def forget_submission(self) -> None:
        """Undo what the submission loaded before may have changed, before the next."""
        from grader.sandbox.baseline import restore

        self.solution = self.module = self.iterator = None
        # Models it was handed may carry its changes beyond their weights.
        self.forget_preloaded_models()
        self.model_calls.clear()
        restore(self.baseline)

    def load(self, path: str, class_name: str, methods: list[str],
             nn_module: bool = False) -> dict[str, Any]:
        """Load the submission and make its Solution; for an `nn_module` problem the
        class is a torch.nn.Module that each call builds afresh from a config."""
        if self.loads and self.baseline is not None:
            self.forget_submission()
        self.loads += 1
        self.path = path
        try:
            spec = importlib.util.spec_from_file_location("submission", path)
            if spec is None or spec.loader is None:
                return {"error": {"type": "ImportError", "message": f"cannot load {path}",
                                  "file": path, "line": None}}
            module = importlib.util.module_from_spec(spec)
            sys.modules["submission"] = module
            with contextlib.redirect_stdout(io.StringIO()):
                spec.loader.exec_module(module)
            self.module = module
            cls = getattr(module, class_name, None)
            if cls is None:
                return {"error": {"type": "MissingClass", "file": path, "line": None,
                                  "message": f"no class {class_name} in {Path(path).name}"}}
            for name in methods:
                if not callable(getattr(cls, name, None)):
                    return {"error": {"type": "MissingMethod", "file": path, "line": None,
                                      "message": f"class {class_name} has no method {name}()"}}
            if nn_module:
                from grader.model.parts import ModuleDriver

                self.solution = ModuleDriver(cls)
                return {"ok": True}
            with contextlib.redirect_stdout(io.StringIO()):
                self.solution = cls()
        except BaseException as exc:  # noqa: BLE001 - any failure of learner code is reported
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"error": describe_error(exc, path, self.policy)}
        return {"ok": True}

    def remote_model(self, spec: Any) -> Any:
        """A model whose forward passes run in the grader, which logs them."""
        from grader.sandbox.witness import RemoteModel

        assert self.witness is not None
        if spec.kind in ("run", "hidden"):
            # Never built here: its sizes come with its description.
            context_length = spec.config.get("context_length")
            if type(context_length) is not int or context_length < 1:
                raise ModelRefused(f"the description of {spec!r} has no context_length")
            if spec.kind == "hidden":
                self.forget_preloaded_models()
        else:
            context_length = self.model(spec).context_length
        return RemoteModel(spec, *self.witness, context_length)

    def forget_preloaded_models(self) -> None:
        """Drop every model this process holds, for a worker handed hidden ones
        (grader/model/hidden.py): no copy of the shipped weights the fork server
        loaded stays at hand for the learner's code to compute its text with."""
        from grader.model import artifacts

        artifacts.shipped_model.cache_clear()
        artifacts.shipped_llama.cache_clear()
        self.models.clear()

    def model(self, spec: Any) -> Any:
        from grader.model.artifacts import build_model
        from grader.model.memo import remember_outputs

        if spec.kind in ("run", "hidden"):
            # The run's weights are the grader's to read (the sandbox keeps this
            # process out of the run's folder); the grader serves its forward passes.
            raise ModelRefused(f"{spec!r} is read by the grader only; a worker is "
                               "handed its forward passes (a witnessed call), never its weights")
        key = spec.key()
        if key not in self.models:
            # The learner's code only reads the model: without gradients to track,
            # a forward pass takes about a fifth less time.
            built = self._your_gpt(spec) if spec.kind == "yours" else build_model(spec)
            model = remember_outputs(built.requires_grad_(False))
            self._record_calls(model)
            self.models[key] = (model, {k: v.clone() for k, v in model.state_dict().items()})
        model, pristine = self.models[key]
        # Undo whatever an earlier call did to the weights, so one bad call
        # cannot spoil the next.
        model.load_state_dict(pristine)
        return model

    def _your_gpt(self, spec: Any) -> Any:
        """The learner's problem-23 GPT with the shipped weights (`talk --yours`).

        Whatever their file raises, or a parameter the shipped weights do not
        fit, is the learner's error about that file, not a crash of the worker.
        """
        from grader.model.parts import KnownWeightsError
        from grader.model.yours import build

        try:
            return build(spec)
        except KnownWeightsError as exc:
            raise ModelRefused(str(exc)) from None
        except BaseException as exc:  # noqa: BLE001 - the learner's code, reported as data
            if isinstance(exc, KeyboardInterrupt):
                raise
            error = describe_error(exc, spec.path, self.policy)
            where = f" (line {error['line']})" if error.get("line") else ""
            what = "modern GPT" if "n_kv_head" in spec.config else "GPT"
            raise ModelRefused(f"your {what} in {Path(spec.path).parent.name}/solution.py "
                               f"failed{where}: {error['type']}: {error['message']}") from None

    def _record_calls(self, model: Any) -> None:
        """Log (new tokens, cached tokens) of every forward pass, as the witness does.

        Recorded before the memo, which answers a window it has seen without a
        pass: the count is of the calls the submission made, as the witness counts
        them where there is one (a fork server's worker), not of the passes run.
        """
        calls = self.model_calls
        forward = model.forward
        inside = [0]  # GPT.forward runs forward_with_cache: one call, counted once

        def recorded_forward(context: Any) -> Any:
            shape = getattr(context, "shape", ())
            calls.append([int(shape[-1]) if len(shape) else 0, 0])
            inside[0] += 1
            try:
                return forward(context)
            finally:
                inside[0] -= 1

        model.forward = recorded_forward
        inner = getattr(model, "forward_with_cache", None)
        if inner is None:  # the learner's own GPT may have none
            return

        def recorded(context: Any, cache: Any = None) -> Any:
            if not inside[0]:
                past = 0 if not cache else int(cache[0][0].shape[2])
                calls.append([int(context.shape[-1]), past])
            return inner(context, cache)

        model.forward_with_cache = recorded

    def call(
        self, method: str, args: list, kwargs: dict, watch: list[int], iterate: bool = False,
        witnessed: bool = False,
    ) -> dict[str, Any]:
        import torch

        from grader.sandbox.protocol import ModelSpec, Unencodable, encode
        from grader.sandbox.witness import announce_chunk

        remote = witnessed and self.witness is not None

        def materialise(value: Any) -> Any:
            if not isinstance(value, ModelSpec):
                return value
            return self.remote_model(value) if remote else self.model(value)

        try:
            args = [materialise(a) for a in args]
            kwargs = {k: materialise(v) for k, v in kwargs.items()}
        except ModelRefused as exc:
            return {"error": {"type": "ModelRefused", "file": None, "line": None,
                              "message": str(exc)}}
        models = [a for a in [*args, *kwargs.values()] if isinstance(a, torch.nn.Module)]
        self.model_calls.clear()
        captured = io.StringIO()
        try:
            with contextlib.redirect_stdout(captured):
                if method.startswith("harness:"):
                    # A problem whose answer is not a Solution method (a class of
                    # its own, driven step by step) is exercised by trusted code.
                    from grader.sandbox import harnesses

                    result = getattr(harnesses, method.removeprefix("harness:"))(
                        self.module, *args, **kwargs)
                else:
                    result = getattr(self.solution, method)(*args, **kwargs)
                if iterate and remote:
                    # The witness counts the calls made before each chunk came out.
                    chunks = []
                    for chunk in result:
                        announce_chunk(*self.witness)
                        chunks.append([chunk, 0])
                    result = chunks
                elif iterate:
                    # A generator runs lazily: record how many model calls had been
                    # made when each chunk came out, to tell streaming from batching.
                    result = [[chunk, len(self.model_calls)] for chunk in result]
        except BaseException as exc:  # noqa: BLE001 - learner errors are data, not crashes
            if isinstance(exc, KeyboardInterrupt):
                raise
            return {"error": describe_error(exc, self.path or "", self.policy),
                    "output": printed(captured.getvalue())}
        # model() restored each model to its pristine weights before the call.
        pristine = {id(model): saved for model, saved in self.models.values()}
        changed = [m for m in models if id(m) in pristine and weights_changed(m, pristine[id(m)])]
        for model in changed:
            # What it answered with other weights must not answer the next call,
            # which model() gives the pristine weights back.
            model.forget_outputs()
        model_changed = bool(changed)
        try:
            encoded = encode(result)
            # The arguments may hold what the submission put into them.
            after = {str(i): encode(args[i]) for i in watch if i < len(args)}
        except Unencodable as exc:
            return {"error": {"type": "BadResult", "file": None, "line": None,
                              "message": f"{method}() returned {exc}, which the grader cannot "
                                         "read; return a str, int, float, list or tensor"},
                    "output": printed(captured.getvalue())}
        return {
            "ok": True,
            "result": encoded,
            "after": after,
            "model_changed": model_changed,
            "model_calls": self.model_calls[:10_000],
            "output": printed(captured.getvalue()),
        }

    def start(self, method: str, args: list, witnessed: bool = False) -> dict[str, Any]:
        """Begin a generator method; its items then come one `next` at a time, live."""
        from grader.sandbox.protocol import ModelSpec

        remote = witnessed and self.witness is not None
        self.iterator = None
        try:
            models = [(self.remote_model(a) if remote else self.model(a))
                      if isinstance(a, ModelSpec) else a for a in args]
        except ModelRefused as exc:
            return {"error": {"type": "ModelRefused", "file": None, "line": None,
                              "message": str(exc)}}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                self.iterator = iter(getattr(self.solution, method)(*models))
        except Exception as exc:  # noqa: BLE001 - learner errors are data
            return {"error": describe_error(exc, self.path or "", self.policy)}
        return {"ok": True}

    def next_item(self) -> dict[str, Any]:
        from grader.sandbox.protocol import Unencodable, encode

        if self.iterator is None:
            return {"done": True}
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                item = next(self.iterator)
            return {"ok": True, "item": encode(item)}
        except StopIteration:
            self.iterator = None
            return {"done": True}
        except Unencodable as exc:
            return {"error": {"type": "BadResult", "message": f"yielded {exc}"}}
        except Exception as exc:  # noqa: BLE001
            return {"error": describe_error(exc, self.path or "", self.policy)}


def serve(proto_in: IO[bytes], proto_out: IO[bytes], hello: dict[str, Any] | None = None,
          *, policy: Any = None, witness: tuple[IO[bytes], IO[bytes]] | None = None,
          hosted: bool = False) -> None:
    """Answer the grader's requests until it closes the channel.

    `hello` goes with the first message (which sandbox layers are in place); if
    it holds an error, the worker reports it and serves nothing. `policy` is the
    sandbox's (an isolation.Policy), so that errors can name a limit reached.
    `hosted`: it may be asked to load one submission after another.
    """
    import torch

    from grader.sandbox.protocol import decode, read_frame, write_frame

    torch.set_num_threads(1)
    worker = WorkerLoop(policy)
    worker.witness = witness
    if hosted:
        from grader.sandbox.baseline import capture

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
        try:
            write_frame(proto_out, reply)
        except (ValueError, TypeError, RecursionError) as exc:
            # json refuses some values encode() lets through (an int of more than
            # 4300 digits): say so rather than end the worker.
            write_frame(proto_out, {"error": {
                "type": "BadResult", "file": None, "line": None,
                "message": f"the result could not be sent to the grader: {type(exc).__name__}: "
                           f"{str(exc)[:200]}"}})


def main() -> None:
    """A worker started on its own (where there is no fork server): talk over stdin/stdout."""
    serve(*_private_channels(), hosted=True)


if __name__ == "__main__":
    main()
