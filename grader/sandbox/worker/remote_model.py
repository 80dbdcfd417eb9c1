"""The worker's stand-in for a model whose forward passes the grader runs.

A check that judges how the learner's code calls the model hands the worker a
`RemoteModel`: each pass is a request to the witness in the grader
(grader/sandbox/host/witness.py), which runs it and keeps the log. A chunk that comes
out of the learner's generator is announced to the witness (`announce_chunk`). This
is the worker's half: a worker never holds the host's Witness.
"""

from __future__ import annotations

from typing import IO, Any

from grader.model.spec import ModelSpec
from grader.sandbox.wire.encoding import decode, encode
from grader.sandbox.wire.frames import read_frame, write_frame

# The model's own errors a pass may raise, by name: the witness sends the name, and
# the worker raises the same kind, as the learner would get from a real GPT.
ERRORS: dict[str, type[Exception]] = {error.__name__: error for error in (
    ValueError, RuntimeError, IndexError, TypeError, AssertionError, KeyError)}


class RemoteModel:
    """Stands in for a GPT inside the worker: `model(ids)` and `forward_with_cache`."""

    def __init__(self, spec: ModelSpec, reader: IO[bytes], writer: IO[bytes],
                 context_length: int, config: Any = None) -> None:
        self._spec, self._reader, self._writer = spec, reader, writer
        # As the GPT it stands in for carries them: code may read model.config.
        self.context_length, self.config = context_length, config

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
