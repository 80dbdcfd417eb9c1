"""The cached passes a witness ran on a hidden model, read again by the reference.

A witnessed check of a KV-cache loop (problem 15) runs the learner's loop first: the
witness (grader/sandbox/host/witness.py) runs each of its `forward_with_cache` passes
on an instance of the hidden model of its own. Then the reference's loop runs on the
grader's shared instance of the same model (grader/model/hidden_weights.py). For a loop
that passes, each of the reference's passes is one the witness has just run: the same
new tokens, a cache of the same bytes, the same weights and code, so the same logits
and cache, bit for bit. The reference computed them all again: 0.86 s of a passing
kv-cache grade's 3.6 s of checks, on a loaded machine. So the witness keeps what it ran,
and the shared instance looks a pass up there before computing it (a fingerprint of the
cache, 0.2 ms, where the shipped model's pass of one token takes 1.8 ms): the
reference's loops on the hidden models then took 0.15 s, and the whole grade 13% less
CPU time (4.7 s against 5.7 s, medians of 5).

One way only, as the memo of `model(context)` (hidden_weights.offer): the witness's
instance never reads what the reference computed, so how fast it answers tells the
learner's code nothing about what the reference read; and the reference never runs
during a witnessed call. A pass is found by its input's bytes, never by the objects
that hold them: the cache a loop hands back is its own, and may have been changed.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch

# What one pass keeps: its logits, and each layer's (keys, values).
Kept = tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]
Key = tuple
# What reading_kept and the witness set on a model instance (a copy must not keep them:
# memo.copy_without_memo).
ATTRIBUTES = ("forward_with_cache", "kept_passes")
# Floats of the passes one witness's instance keeps (8 MB, as much as its memo of
# `model(context)`), the latest first: the passes of kv-cache's longest fixed case
# ("crop-many-times", 100 characters on the shipped model) hold 1.5 million.
KEPT_ELEMENTS = 2_000_000


def fingerprint(cache: Any) -> bytes:
    """A digest of a cache's dtypes, shapes and bytes: the same cache handed back has
    it. The dtype too: the same bytes read as another dtype are another cache (the
    witness refuses one of a dtype other than the model's, and this never relies on it)."""
    digest = hashlib.blake2b(digest_size=16)
    for layer in cache:
        for tensor in layer:
            digest.update(repr((tensor.dtype, tuple(tensor.shape))).encode())
            digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.digest()


def pass_key(context: torch.Tensor, cache_fingerprint: bytes | None) -> Key:
    """A pass's key: its new tokens (dtype, shape and bytes) and its cache's fingerprint
    (None: no cache given)."""
    return (context.dtype, tuple(context.shape), context.contiguous().numpy().tobytes(),
            cache_fingerprint)


class KeptPasses:
    """The passes one witness's instance ran, by key; at most `max_elements` floats,
    the least recently used dropped first."""

    def __init__(self, max_elements: int = KEPT_ELEMENTS) -> None:
        self.max_elements = max_elements
        self._passes: OrderedDict[Key, Kept] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()  # kept by the witness's thread, read by the main one

    def keep(self, key: Key, logits: torch.Tensor, cache: list) -> None:
        kept: Kept = (logits.detach(), [(k.detach(), v.detach()) for k, v in cache])
        size = logits.numel() + sum(k.numel() + v.numel() for k, v in cache)
        with self._lock:
            if key in self._passes:
                self._passes.move_to_end(key)
                return
            self._passes[key] = kept
            self._held += size
            while self._held > self.max_elements and self._passes:
                logits, layers = self._passes.popitem(last=False)[1]
                self._held -= logits.numel() + sum(k.numel() + v.numel() for k, v in layers)

    def get(self, key: Key) -> Kept | None:
        with self._lock:
            return self._passes.get(key)


def reading_kept(model: Any, lookup: Callable[[Key], Kept | None]) -> Any:
    """Make `model.forward_with_cache` ask `lookup` for a pass before computing it;
    returns the same model. A pass found is handed out as copies, so that nothing
    the caller does to it reaches the one kept."""
    compute = model.forward_with_cache

    def forward_with_cache(context: torch.Tensor, cache: Any = None) -> Any:
        found = None
        if (isinstance(context, torch.Tensor) and context.dtype == torch.long
                and context.device.type == "cpu"):
            try:
                found = lookup(pass_key(context, None if cache is None else fingerprint(cache)))
            except (TypeError, ValueError, AttributeError, RuntimeError):
                found = None  # no cache of tensors: the model says what is wrong with it
        if found is None:
            return compute(context, cache)
        logits, layers = found
        return logits.clone(), [(k.clone(), v.clone()) for k, v in layers]

    model.forward_with_cache = forward_with_cache
    return model
