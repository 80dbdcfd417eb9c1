"""Model calls observed from outside the submission's process.

Some checks judge how the learner's code uses the model: streaming must yield
each chunk before the characters after it are made, a KV cache must feed one
new token per step. A record kept inside the worker could be rewritten by the
code it is meant to observe. So, for those checks, the worker holds no model:
it holds a `RemoteModel` whose forward passes run in the grader (the
`Witness`), which keeps the log. A chunk that comes out of a generator is
announced to the witness too, so it can say how many calls came before it.
"""

from __future__ import annotations

import socket
import threading
from typing import IO, Any

from grader.sandbox.protocol import (
    ModelSpec,
    ProtocolError,
    decode,
    encode,
    read_frame,
    write_frame,
)

MAX_BATCH = 64  # rows in one forward pass the witness will run for a submission
ERRORS: dict[str, type[Exception]] = {error.__name__: error for error in (
    ValueError, RuntimeError, IndexError, TypeError, AssertionError, KeyError)}


class RemoteModel:
    """Stands in for a GPT inside the worker: `model(ids)` and `forward_with_cache`."""

    def __init__(self, spec: ModelSpec, reader: IO[bytes], writer: IO[bytes],
                 context_length: int) -> None:
        self._spec, self._reader, self._writer = spec, reader, writer
        self.context_length = context_length

    def _ask(self, message: dict) -> Any:
        write_frame(self._writer, {**message, "model": encode(self._spec)})
        reply = read_frame(self._reader)
        if reply is None:
            raise RuntimeError("the grader stopped answering model calls")
        error = reply.get("error")
        if isinstance(error, dict):
            # The model's own error, as the learner would get from a real GPT.
            kind = ERRORS.get(str(error.get("type")), RuntimeError)
            raise kind(str(error.get("message", "")))
        return decode(reply["value"])

    def __call__(self, context: Any) -> Any:
        return self.forward(context)

    def forward(self, context: Any) -> Any:
        return self._ask({"op": "forward", "context": encode(context)})

    def forward_with_cache(self, context: Any, cache: Any = None) -> Any:
        logits, new_cache = self._ask({"op": "forward_with_cache", "context": encode(context),
                                       "cache": encode(cache)})
        return logits, [tuple(layer) for layer in new_cache]

    def eval(self) -> RemoteModel:
        return self

    def train(self, mode: bool = True) -> RemoteModel:
        return self

    def __repr__(self) -> str:
        return f"GPT({self._spec!r})"


def announce_chunk(reader: IO[bytes], writer: IO[bytes]) -> None:
    """Tell the witness a chunk has just come out of the learner's generator.

    It waits for the answer, so that the mark is counted before the worker's
    reply can reach the grader.
    """
    write_frame(writer, {"op": "mark"})
    if read_frame(reader) is None:
        raise RuntimeError("the grader stopped answering")


class Witness:
    """Serves a worker's model calls in the grader's process and logs them.

    `calls` holds [new tokens, cached tokens] per forward pass and `passes` the
    token ids it was given and the logits it answered at the last position (of
    the first row); `marks` holds, per announced chunk,
    how many calls had been made by then. All are reset by `clear()` before
    each call of the learner's code.
    """

    def __init__(self, channel: socket.socket) -> None:
        self.socket = channel
        self.reader, self.writer = channel.makefile("rb"), channel.makefile("wb")
        self.calls: list[list[int]] = []
        self.passes: list[tuple[list[int], Any]] = []
        self.marks: list[int] = []
        self.models: dict[tuple, Any] = {}  # the models the current call was given
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def clear(self) -> None:
        with self.lock:
            self.calls, self.passes, self.marks = [], [], []

    def allow(self, spec: ModelSpec) -> None:
        """Build a model the next call is given, here in the grader's main thread.

        Building a random model seeds torch's global generator, which the
        reference may be sampling with at the same moment; so the witness's own
        thread never builds one, and serves only the models the call was given.
        """
        from grader.model.artifacts import build_model

        model = build_model(spec)
        with self.lock:
            self.models[spec.key()] = model

    def _serve(self) -> None:
        try:
            while True:
                message = read_frame(self.reader)
                if message is None:
                    return
                if message.get("op") == "mark":
                    with self.lock:
                        self.marks.append(len(self.calls))
                    write_frame(self.writer, {"ok": True})
                    continue
                try:
                    reply: dict[str, Any] = {"value": encode(self._forward(message))}
                except (ProtocolError, RecursionError) as exc:
                    reply = {"error": {"type": "ValueError",
                                       "message": f"the model could not read its input: {exc}"}}
                except tuple(ERRORS.values()) as exc:
                    reply = {"error": {"type": type(exc).__name__, "message": str(exc)[:2000]}}
                write_frame(self.writer, reply)
        except (ProtocolError, OSError, ValueError, RecursionError):
            return  # the worker is gone or broke the protocol; its calls end here

    def _forward(self, message: dict) -> Any:
        import torch

        spec = decode(message["model"])
        if not isinstance(spec, ModelSpec):
            raise ValueError("not a model")
        with self.lock:
            model = self.models.get(spec.key())
        if model is None:
            raise ValueError("not the model this call was given")
        context = decode(message["context"])
        if not isinstance(context, torch.Tensor) or context.dim() != 2:
            raise ValueError("the context must be a (batch, time) tensor of token ids")
        if context.dtype != torch.long:
            raise ValueError(f"token ids must be a LongTensor, not {context.dtype}")
        if context.shape[0] > MAX_BATCH:
            raise ValueError(f"a batch of {context.shape[0]} rows is more than the "
                             f"{MAX_BATCH} this model takes")
        cache = decode(message.get("cache")) if message["op"] == "forward_with_cache" else None
        past = int(cache[0][0].shape[2]) if cache else 0
        with torch.no_grad():
            if message["op"] == "forward":
                value: Any = model(context)
                logits = value
            else:
                logits, new_cache = model.forward_with_cache(context, cache)
                value = [logits, [list(layer) for layer in new_cache]]
        with self.lock:
            self.calls.append([int(context.shape[1]), past])
            self.passes.append((context[0].tolist(), logits[0, -1].clone()))
        return value

    def close(self) -> None:
        for end in (self.writer, self.reader, self.socket):
            try:
                end.close()
            except OSError:
                pass
