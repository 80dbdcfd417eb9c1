"""The witness checks every request against the model's own sizes before it runs it.

A worker's requests come from the learner's code. Here they are written straight
to a witness's socket, as hostile code in a worker could write them: oversized
frames, caches of the wrong shape, dtype or length, too many rows. Each call
fails with a message, the witness goes on serving, and the grader's memory does
not grow with what was sent.
"""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import msgspec
import pytest
import torch

from grader.model.artifacts import random_model
from grader.model.spec import ModelSpec
from grader.sandbox.host import witness as witness_module
from grader.sandbox.host.witness import Witness, request_limit
from grader.sandbox.wire.encoding import decode, encode
from grader.sandbox.wire.frames import read_frame, write_frame

CONFIG = {"vocab_size": 10, "context_length": 6, "n_layer": 2, "n_head": 2, "n_embd": 8}
SPEC = ModelSpec("random", CONFIG, 3)


@pytest.fixture
def served():
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    witness = Witness(ours)
    witness.allow(SPEC)
    reader, writer = theirs.makefile("rb"), theirs.makefile("wb")
    yield witness, reader, writer
    for end in (reader, writer, theirs):
        end.close()
    witness.close()


def ask(reader, writer, context, cache=None, op="forward_with_cache") -> dict:
    message = {"op": op, "model": encode(SPEC), "context": encode(context)}
    if op == "forward_with_cache":
        message["cache"] = encode(cache)
    write_frame(writer, message)
    reply = read_frame(reader)
    assert reply is not None
    return reply


def error_of(reply: dict) -> str:
    assert "error" in reply, "the call was run"
    return f"{reply['error']['type']}: {reply['error']['message']}"


def honest_cache(tokens: int, rows: int = 1) -> list:
    with torch.no_grad():
        _, cache = random_model(CONFIG, 3).forward_with_cache(
            torch.zeros(rows, tokens, dtype=torch.long))
    return [list(layer) for layer in cache]


def test_an_honest_cache_is_served_and_logged(served):
    witness, reader, writer = served
    reply = ask(reader, writer, torch.tensor([[1]]), honest_cache(3))
    logits, cache = decode(reply["value"])
    assert logits.shape == (1, 1, 10) and cache[0][0].shape == (1, 2, 4, 4)
    assert witness.calls == [[1, 3]]


@pytest.mark.parametrize("cache, says", [
    (lambda: honest_cache(3)[:1], "one (keys, values) pair for each of the model's 2 layers"),
    (lambda: [[k.double(), v] for k, v in honest_cache(3)], "torch.float32 tensor"),
    (lambda: [[k[:, :1], v] for k, v in honest_cache(3)], "(rows, heads, cached tokens"),
    (lambda: [[k, v[:, :, :2]] for k, v in honest_cache(3)], "(rows, heads, cached tokens"),
    (lambda: honest_cache(3, rows=2), "(rows, heads, cached tokens"),
    (lambda: [[k] for k, _ in honest_cache(3)], "is not a (keys, values) pair"),
    (lambda: honest_cache(6), "the model sees at most context_length=6 tokens, but got 7"),
])
def test_a_cache_the_model_would_not_make_is_refused_before_it_runs(served, cache, says):
    witness, reader, writer = served
    assert says in error_of(ask(reader, writer, torch.tensor([[1]]), cache()))
    assert witness.calls == []  # nothing ran, nothing logged
    # and the witness still serves the next call
    assert "value" in ask(reader, writer, torch.tensor([[1, 2]]))


@pytest.mark.parametrize("context, says", [
    (torch.zeros(1, 7, dtype=torch.long), "the model sees at most context_length=6"),
    (torch.zeros(1, 0, dtype=torch.long), "holds no tokens"),
    (torch.zeros(65, 1, dtype=torch.long), "a batch of 65 rows"),
    (torch.tensor([[3, 10]]), "IndexError: index out of range"),
    (torch.tensor([[3, -1]]), "IndexError: index out of range"),
    (torch.zeros(1, 2), "LongTensor"),
])
def test_a_context_the_model_would_not_take_is_refused(served, context, says):
    witness, reader, writer = served
    assert says in error_of(ask(reader, writer, context, op="forward"))
    assert witness.calls == []


def peak_rss_after(action) -> int:
    """Bytes the process's peak resident memory grew by while `action` ran."""
    status = Path("/proc/self/status")
    clear = Path("/proc/self/clear_refs")
    if not (status.exists() and clear.exists()):
        pytest.skip("needs Linux's /proc to read the peak resident memory")

    def field(name: str) -> int:
        line = next(x for x in status.read_text().splitlines() if x.startswith(name + ":"))
        return int(line.split()[1]) * 1024

    try:
        clear.write_text("5")  # resets the peak to what is resident now
    except OSError:
        pytest.skip("cannot reset the peak resident memory here")
    before = field("VmRSS")
    action()
    return field("VmHWM") - before


def test_an_oversized_cache_fails_cleanly_and_the_grader_does_not_hold_it(served):
    witness, reader, writer = served
    # A cache of 36 MB for a model whose largest honest request is a few hundred KB
    # (and below the protocol's own frame limit), as the worker's encode() writes it.
    size = 9 * 2**20  # bytes of each of its four tensors
    tensor = torch.zeros(1, 2, size // 8, 1)
    message = {"op": "forward_with_cache", "model": encode(SPEC),
               "context": encode(torch.tensor([[1]])),
               "cache": encode([(tensor, tensor)] * 2)}
    data = msgspec.msgpack.encode(message)
    assert len(data) > 20 * request_limit(random_model(CONFIG, 3))
    replies = []

    def send() -> None:
        writer.write(struct.pack(">I", len(data)))
        writer.write(data)
        writer.flush()
        replies.append(read_frame(reader))

    grew = peak_rss_after(send)
    # Read a block at a time and dropped: the frame itself is 48 MB.
    assert grew < 16 * 2**20, f"the peak resident memory grew by {grew / 2**20:.0f} MB"
    assert "larger than any it takes" in error_of(replies[0])
    assert f"a message of {len(data)} bytes" in error_of(replies[0])
    assert witness.calls == []
    assert "value" in ask(reader, writer, torch.tensor([[1]]), honest_cache(2))


def test_the_log_of_one_call_is_bounded(served, monkeypatch):
    witness, reader, writer = served
    monkeypatch.setattr(witness_module, "MAX_ROWS", 5)
    context = torch.zeros(2, 1, dtype=torch.long)
    for _ in range(2):
        assert "value" in ask(reader, writer, context, op="forward")
    assert "more than 5 rows of model calls" in error_of(ask(reader, writer, context,
                                                             op="forward"))
    assert len(witness.passes) == 2
    witness.clear()  # the next call of the learner's code
    witness.allow(SPEC)
    assert "value" in ask(reader, writer, context, op="forward")


def test_a_model_the_call_was_not_given_is_refused(served):
    _, reader, writer = served
    message = {"op": "forward", "model": encode(ModelSpec("random", CONFIG, 4)),
               "context": encode(torch.tensor([[1]]))}
    write_frame(writer, message)
    assert "not the model this call was given" in error_of(read_frame(reader))


def test_marks_are_bounded_too(served, monkeypatch):
    witness, reader, writer = served
    monkeypatch.setattr(witness_module, "MAX_ROWS", 3)
    for _ in range(5):
        write_frame(writer, {"op": "mark"})
        assert read_frame(reader) is not None
    assert witness.marks == [0, 0, 0]
