"""Model calls observed from outside the submission's process.

Some checks judge how the learner's code uses the model: streaming must yield
each chunk before the characters after it are made, a KV cache must feed one
new token per step. A record kept inside the worker could be rewritten by the
code it is meant to observe. So, for those checks, the worker holds no model:
it holds a `RemoteModel` (grader/sandbox/worker/remote_model.py) whose forward
passes run in the grader (the `Witness`), which keeps the log. A chunk that comes
out of a generator is announced to the witness too, so it can say how many calls
came before it.

The log says which windows each pass saw, so a check can tell whether the text
came from those passes (grader/grading/contracts/text_from_calls.py). For that to mean
anything the worker must have no other way to the logits: the checks give it
hidden models (grader/model/hidden_weights.py), and the witness serves them from an
instance of its own, whose memo nothing else fills, so that how fast it
answers says nothing about what the reference has read.

Everything a request holds comes from the submission. So it is checked before
anything runs, against the model's own sizes: the frame's size, the context's
shape, dtype and token ids, and the whole cache (one (keys, values) pair per
layer, each of the model's dtype and of the shape the model makes, their
length and the context's within the window). The log is bounded too.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from grader.locale import tr
from grader.model.config import no_tokens, not_token_ids, too_long
from grader.model.spec import ModelSpec
from grader.sandbox.host.channel import close_quietly
from grader.sandbox.wire.encoding import ProtocolError, decode, encode
from grader.sandbox.wire.frames import Oversized, read_frame, write_frame
from grader.sandbox.worker.remote_model import ERRORS

MAX_BATCH = 64  # rows in one forward pass the witness will run for a submission
# Rows of forward passes logged during one call of the learner's code (an honest
# call makes one per new character): beyond it, calls are refused, not logged.
MAX_ROWS = 10_000
MEMO_ELEMENTS = 2_000_000  # floats the witness's own memo of a model holds (8 MB)
KEPT_MODELS = 8  # models built for earlier calls, kept for the next ones


@dataclass
class Pass:
    """One forward pass the witness served.

    It unpacks as (tokens, logits) of its first row, as trace reads it: the new
    token ids and the logits at the last position. `windows` holds, per row,
    every token the model saw (the cached ones first), or None where the cache
    given was not one this witness made; `last` the last position's logits of
    every row.
    """

    tokens: list[int]
    logits: Any
    windows: list[list[int] | None]
    last: Any

    def __iter__(self) -> Iterator[Any]:
        return iter((self.tokens, self.logits))


def request_limit(model: Any) -> int:
    """Bytes of the largest request an honest call to `model` sends, and some room.

    The context and the cache at their largest (MAX_BATCH rows, the whole
    window), with room for the message's wrapping.
    """
    config = model.config
    itemsize = next(model.parameters()).element_size()
    window = config.context_length
    raw = MAX_BATCH * window * (8 + 2 * config.n_layer * config.n_embd * itemsize)
    return raw + 64 * 1024 + 512 * config.n_layer


class Witness:
    """Serves a worker's model calls in the grader's process and logs them.

    `calls` holds [new tokens, cached tokens] per forward pass and `passes` a
    `Pass` for each; `marks` holds, per announced chunk, how many calls had been
    made by then. All are reset by `clear()` before each call of the learner's
    code.
    """

    def __init__(self, channel: socket.socket) -> None:
        self.socket = channel
        self.reader, self.writer = channel.makefile("rb"), channel.makefile("wb")
        self.built: OrderedDict[tuple, Any] = OrderedDict()  # the witness's own instances
        self.lock = threading.Lock()
        self.clear()
        threading.Thread(target=self._serve, daemon=True).start()

    def clear(self) -> None:
        with self.lock:
            self.calls: list[list[int]] = []
            self.passes: list[Pass] = []
            self.marks: list[int] = []
            self.rows = 0  # rows logged in passes since clear()
            # The windows of the caches this witness handed out, by their bytes.
            self.origins: dict[bytes, list[list[int] | None]] = {}
            self.models: dict[tuple, Any] = {}  # the models the current call was given
            self.limit = 64 * 1024  # bytes of a request: the current call's models' largest

    def allow(self, spec: ModelSpec) -> None:
        """Give the next call this model, built here in the grader's main thread.

        Building a model seeds torch's global generator, which the reference may
        be sampling with at the same moment; so the witness's own thread never
        builds one, and serves only the models the call was given.
        """
        key = spec.key()
        model = self.built.get(key)
        if model is None:
            model = own_instance(spec)
            self.built[key] = model
            while len(self.built) > KEPT_MODELS:
                self.built.popitem(last=False)
        self.built.move_to_end(key)
        with self.lock:
            self.models[key] = model
            self.limit = max(self.limit, request_limit(model))

    def _serve(self) -> None:
        try:
            while True:
                try:
                    # Asked once a request comes: allow() may raise it while this waits.
                    message = read_frame(self.reader, self._limit)
                except Oversized as exc:
                    write_frame(self.writer, {"error": {
                        "type": "ValueError",
                        "message": tr("the model's input is larger than any it takes "
                                      "({reason}): at most context_length tokens, and a cache "
                                      "of that many", reason=exc)}})
                    continue
                if message is None:
                    return
                if message.get("op") == "mark":
                    with self.lock:
                        counted = len(self.marks) < MAX_ROWS  # no more chunks than calls
                        if counted:
                            self.marks.append(len(self.calls))
                    write_frame(self.writer, {"ok": True} if counted else {"error": {
                        "type": "RuntimeError",
                        "message": tr("more than {most} chunks in one call of your code",
                                      most=MAX_ROWS)}})
                    continue
                try:
                    reply: dict[str, Any] = {"value": encode(self._forward(message))}
                except (ProtocolError, RecursionError) as exc:
                    reply = {"error": {"type": "ValueError",
                                       "message": tr("the model could not read its input: "
                                                     "{reason}", reason=exc)}}
                except tuple(ERRORS.values()) as exc:
                    reply = {"error": {"type": type(exc).__name__, "message": str(exc)[:2000]}}
                write_frame(self.writer, reply)
        except (ProtocolError, OSError, ValueError, RecursionError):
            return  # the worker is gone or broke the protocol; its calls end here

    def _limit(self) -> int:
        with self.lock:
            return self.limit

    def _forward(self, message: dict) -> Any:
        import torch

        from grader.model.kept_passes import fingerprint, pass_key

        op = message.get("op")
        if op not in ("forward", "forward_with_cache"):
            raise ValueError(tr("unknown model call {op}", op=repr(str(op)[:40])))
        spec = decode(message.get("model"))
        if not isinstance(spec, ModelSpec):
            raise ValueError(tr("not a model"))
        with self.lock:
            model = self.models.get(spec.key())
        if model is None:
            raise ValueError(tr("not the model this call was given"))
        context = decode(message.get("context"))
        expect_context(model, context)
        cache = None
        if op == "forward_with_cache":
            cache = decode(message.get("cache"))
            if isinstance(cache, (list, tuple)) and not cache:
                cache = None  # no tokens cached yet
            expect_cache(model, context, cache)
        rows = int(context.shape[0])
        with self.lock:
            if self.rows + rows > MAX_ROWS:
                raise RuntimeError(tr("more than {most} rows of model calls in one call of "
                                      "your code; the grader serves no more", most=MAX_ROWS))
            self.rows += rows
        past = int(cache[0][0].shape[2]) if cache is not None else 0
        before: list[list[int] | None] = [[] for _ in range(rows)]
        given = fingerprint(cache) if cache is not None else None
        if given is not None:
            before = self.origins.get(given, [None] * rows)
        with torch.no_grad():
            if op == "forward":
                value: Any = model(context)
                logits = value
            else:
                logits, new_cache = model.forward_with_cache(context, cache)
                value = [logits, [list(layer) for layer in new_cache]]
                kept = getattr(model, "kept_passes", None)
                if kept is not None:  # for the reference's loop after the call
                    kept.keep(pass_key(context, given), logits, new_cache)
        ids = context.tolist()
        windows = [None if seen is None else seen + row for seen, row in zip(before, ids)]
        with self.lock:
            if op == "forward_with_cache":
                self.origins[fingerprint(new_cache)] = windows
            self.calls.append([int(context.shape[1]), past])
            self.passes.append(Pass(ids[0], logits[0, -1].clone(), windows,
                                    logits[:, -1].clone()))
        return value

    def close(self) -> None:
        # The serving thread may be blocked reading (or writing) its end, holding the
        # buffer's lock, and closing the buffer waits for that lock: a worker that
        # was stopped (SIGSTOP) and could not be ended would hold the grader for ever.
        # Shutting the socket down first wakes that thread.
        with contextlib.suppress(OSError):
            self.socket.shutdown(socket.SHUT_RDWR)
        close_quietly(self.writer, self.reader, self.socket)


def own_instance(spec: ModelSpec) -> Any:
    """The witness's own instance of the model `spec` describes, with a memo of
    its own: the grader's shared instance is the one the reference reads (and
    which may read this one's, never the other way round)."""
    from grader.model import hidden_weights as hidden
    from grader.model.artifacts import build_model
    from grader.model.kept_passes import KeptPasses
    from grader.model.memo import remember_outputs

    if spec.kind != "hidden":
        return remember_outputs(hidden.copy_of(build_model(spec)), MEMO_ELEMENTS)
    model = remember_outputs(hidden.private_model(spec), MEMO_ELEMENTS)
    # Its cached passes too (grader/model/kept_passes.py), which _forward keeps.
    model.kept_passes = KeptPasses()
    hidden.offer(spec, model)  # the reference may read it, once the call is over
    return model


def expect_context(model: Any, context: Any) -> None:
    """A (batch, time) LongTensor of token ids the model has, that fits its window."""
    import torch

    if not isinstance(context, torch.Tensor) or context.dim() != 2 or (
            context.dtype != torch.long):
        # The GPT's own words (grader/model/gpt.py), as a learner would get them from it.
        raise ValueError(not_token_ids(f"{context.dtype} of shape {tuple(context.shape)}"
                                       if isinstance(context, torch.Tensor)
                                       else type(context).__name__))
    rows, length = context.shape
    if not 1 <= rows <= MAX_BATCH:
        raise ValueError(tr("a batch of {rows} rows; this model takes 1 to {most}", rows=rows,
                            most=MAX_BATCH))
    if length < 1:
        raise ValueError(no_tokens())
    window = model.config.context_length
    if length > window:
        raise ValueError(too_long(window, length))
    if bool(((context < 0) | (context >= model.config.vocab_size)).any()):
        raise IndexError("index out of range in self")  # what the embedding itself says


def expect_cache(model: Any, context: Any, cache: Any) -> None:
    """One (keys, values) pair per layer, each as the model makes them, for the
    same rows as the context, and with it no longer than the window."""
    import torch

    if cache is None:
        return
    config = model.config
    layers = config.n_layer
    if not isinstance(cache, (list, tuple)) or len(cache) != layers:
        raise ValueError(tr("the cache must hold one (keys, values) pair for each of the "
                            "model's {layers} layers, as forward_with_cache returned it",
                            layers=layers))
    dtype = next(model.parameters()).dtype
    # A modern run's cache holds its key/value heads, fewer than its query heads.
    heads = getattr(config, "n_kv_head", config.n_head)
    rows, length = context.shape
    past = None
    for i, layer in enumerate(cache):
        if not isinstance(layer, (list, tuple)) or len(layer) != 2:
            raise ValueError(tr("layer {layer} of the cache is not a (keys, values) pair",
                                layer=i))
        for what, tensor in zip((tr("keys"), tr("values")), layer):
            if not isinstance(tensor, torch.Tensor) or tensor.dtype != dtype or tensor.dim() != 4:
                raise ValueError(tr("the {what} of layer {layer} of the cache must be a 4-d "
                                    "{dtype} tensor, as forward_with_cache returned them",
                                    what=what, layer=i, dtype=dtype))
            if past is None:
                past = int(tensor.shape[2])
            shape = (rows, heads, past, config.n_embd // heads)
            if tuple(tensor.shape) != shape:
                raise ValueError(tr("the {what} of layer {layer} of the cache have shape "
                                    "{shape}; with this context they must have shape {needed} "
                                    "(rows, heads, cached tokens, head size)", what=what,
                                    layer=i, shape=tuple(tensor.shape), needed=shape))
    if past is not None and past + length > config.context_length:
        raise ValueError(too_long(config.context_length, past + length))
