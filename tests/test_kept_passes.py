"""The reference's loop on a hidden model reads the cached passes the witness ran.

What must hold: whatever the reference's `forward_with_cache` reads instead of
computing is what computing gives, bit for bit, and a pass is read only for the same
new tokens and a cache of the same bytes (grader/model/kept_passes.py).
"""

from __future__ import annotations

import socket

import pytest
import torch

from grader.model import artifacts
from grader.model import hidden_weights as hidden
from grader.model.kept_passes import KeptPasses, fingerprint, pass_key, reading_kept
from grader.model.spec import ModelSpec
from grader.sandbox.host.witness import Witness
from grader.sandbox.worker.remote_model import RemoteModel

CONFIG = {"vocab_size": 10, "context_length": 6, "n_layer": 2, "n_head": 2, "n_embd": 8}
SMALL = ModelSpec("random", CONFIG, 5)
PROMPT = torch.tensor([[3, 1]])


def cached_loop(model, steps: int) -> list:
    """Each pass of a greedy KV-cache loop: (new tokens, cache given, logits, new cache)."""
    passes, cache, fresh = [], None, PROMPT
    for _ in range(steps):
        logits, new_cache = model.forward_with_cache(fresh, cache)
        passes.append((fresh, cache, logits, [tuple(layer) for layer in new_cache]))
        cache, fresh = new_cache, logits[:, -1:].argmax(-1)
    return passes


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        torch.equal(x[2], y[2]) and all(torch.equal(s, t) for p, q in zip(x[3], y[3])
                                        for s, t in zip(p, q))
        for x, y in zip(a, b))


@pytest.fixture
def witnessed():
    """A hidden model, a witness serving it and the worker's stand-in for it."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    witness = Witness(ours)
    spec = hidden.hide(SMALL, artifacts.build_model)
    witness.allow(spec)
    reader, writer = theirs.makefile("rb"), theirs.makefile("wb")
    yield spec, RemoteModel(spec, reader, writer, CONFIG["context_length"])
    for end in (reader, writer, theirs):
        end.close()
    witness.close()


def test_the_reference_reads_the_witnessed_passes_as_computing_gives_them(
        witnessed, monkeypatch):
    spec, remote = witnessed
    found = []
    lookup = hidden._witnessed_pass  # noqa: SLF001 - counted, as the shared model asks it
    monkeypatch.setattr(hidden, "_witnessed_pass",
                        lambda *a: found.append(lookup(*a)) or found[-1])
    alone = hidden.copy_of(hidden.hidden_model(spec))
    assert "forward_with_cache" not in vars(alone)  # a copy computes every pass
    with torch.no_grad():
        served = cached_loop(remote, 4)  # the learner's loop, through the witness
        shared = cached_loop(hidden.hidden_model(spec), 4)  # then the reference's
        computed = cached_loop(alone, 4)
    assert len(found) == 4 and all(pass_ is not None for pass_ in found)
    assert same(shared, computed) and same(served, computed)


def test_a_pass_is_read_only_for_the_same_new_tokens_and_cache_bytes():
    model = hidden.copy_of(artifacts.build_model(SMALL))
    kept = KeptPasses()
    reader = reading_kept(hidden.copy_of(model), kept.get)
    step = torch.tensor([[4]])
    with torch.no_grad():
        _, cache = model.forward_with_cache(PROMPT)
        # Kept for `step` after `cache`: marked logits, so that a read shows.
        marked = torch.full((1, 1, CONFIG["vocab_size"]), 7.0)
        kept.keep(pass_key(step, fingerprint(cache)), marked.clone(), cache)
        read, _ = reader.forward_with_cache(step, cache)
        assert torch.equal(read, marked)
        read.zero_()  # handed out as a copy: the kept pass stays as it was
        assert torch.equal(reader.forward_with_cache(step, [tuple(layer) for layer in cache])[0],
                           marked)
        changed = [(k.clone(), v.clone()) for k, v in cache]
        changed[1][1][0, 0, 0, 0] += 1.0  # one float of the last layer's values
        for tokens, given in ((step, changed), (torch.tensor([[5]]), cache), (step, None)):
            assert torch.equal(reader.forward_with_cache(tokens, given)[0],
                               model.forward_with_cache(tokens, given)[0])
        # The same bytes read as another dtype are another cache, and other tokens.
        as_ints = [(k.view(torch.int32), v.view(torch.int32)) for k, v in cache]
        assert kept.get(pass_key(step, fingerprint(as_ints))) is None
        assert kept.get(pass_key(step.view(torch.float64), fingerprint(cache))) is None


def test_kept_passes_stay_within_their_bound():
    kept = KeptPasses(max_elements=100)
    pair = [(torch.zeros(30), torch.zeros(30))]
    for token in range(3):
        kept.keep(pass_key(torch.tensor([[token]]), None), torch.zeros(10), pair)
    assert kept.get(pass_key(torch.tensor([[0]]), None)) is None  # the oldest went first
    assert kept.get(pass_key(torch.tensor([[2]]), None)) is not None
