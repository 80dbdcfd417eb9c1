"""Models a submission's worker cannot rebuild, for the checks that judge how it uses one.

A witnessed check (streaming, the KV cache) asks whether the learner's text
came from the model calls the grader served. If the worker could compute the
same logits for itself, it could make the text on its own and send calls for
show only. So those checks run on a model whose weights are drawn here, in the
grader, when the grade runs: the declared model's weights (the shipped one's,
or a small random one's) with noise from a seed the worker is never sent. The
worker is sent a `ModelSpec("hidden", sizes, handle)`: the sizes it needs to
call the model, and a handle that only this process can turn into weights.

The noise (NOISE times each weight tensor's root mean square) keeps the
shipped model's character: its text still has words and sentences, so the
chunks and windows the checks look at still occur. Yet its text differs from
the shipped model's within a few characters, so a copy of the shipped model is
no stand-in for it.
"""

from __future__ import annotations

import secrets
import threading
import weakref
from collections.abc import Callable
from typing import Any

import torch

from grader.model.gpt import GPT
from grader.model.spec import ModelSpec

NOISE = 0.3
HIDDEN_KINDS = ("shipped", "random")  # what can be hidden: the models a worker can build

_lock = threading.Lock()
_hidden: dict[tuple, ModelSpec] = {}  # a declared model's key -> its hidden spec
# handle -> (declared spec, weight seed, declared model)
_secrets: dict[int, tuple[ModelSpec, int, GPT]] = {}
_models: dict[int, GPT] = {}  # handle -> the grader's model, shared by the reference's side
_offered: dict[int, list[weakref.ref]] = {}  # handle -> witnesses' instances it may read
KEPT_OFFERS = 4


def hide(spec: ModelSpec, build: Callable[[ModelSpec], GPT]) -> ModelSpec:
    """The hidden stand-in for `spec`, the same one throughout this grade; `build`
    makes the declared model (artifacts.build_model, passed in: artifacts builds
    hidden models with this module).

    Models a worker never builds (a trained run, the learner's own GPT) are
    returned as they are.
    """
    if spec.kind not in HIDDEN_KINDS:
        return spec
    with _lock:
        found = _hidden.get(spec.key())
        if found is None:
            base = build(spec)
            handle = secrets.randbits(62)
            found = ModelSpec("hidden", base.config.to_dict(), handle)
            _hidden[spec.key()] = found
            _secrets[handle] = (spec, secrets.randbits(63), base)
    return found


def hide_args(args: tuple, build: Callable[[ModelSpec], GPT]) -> tuple:
    """`args` with every model replaced by its hidden stand-in."""
    return tuple(hide(a, build) if isinstance(a, ModelSpec) else a for a in args)


def declared(spec: ModelSpec) -> ModelSpec:
    """The model a hidden spec stands in for (what the check declared)."""
    return _secret(spec)[0]


def hidden_model(spec: ModelSpec) -> GPT:
    """The grader's model for a hidden spec: built once, then only read (like
    artifacts.build_model's models, it is shared by the reference and the judges)."""
    with _lock:
        model = _models.get(spec.seed)
    if model is None:
        from grader.model.kept_passes import reading_kept
        from grader.model.memo import remember_outputs

        _, seed, base = _secret(spec)
        handle = spec.seed
        model = remember_outputs(noisy_copy(base, seed),
                                 also=lambda key: _witnessed_output(handle, key))
        # Its cached passes too: those the witnesses ran (grader/model/kept_passes.py).
        reading_kept(model, lambda key: _witnessed_pass(handle, key))
        with _lock:
            model = _models.setdefault(spec.seed, model)
    return model


def private_model(spec: ModelSpec) -> GPT:
    """A new instance of the hidden model, shared with nobody (the witness's own)."""
    return copy_of(hidden_model(spec))


def offer(spec: ModelSpec, instance: GPT) -> None:
    """Let the grader's hidden model read what a witness's instance computed.

    One way only: the witness's instance never reads what the reference
    computed, which would make its answers faster for the windows the reference
    read. And only once the learner's call is over, since the reference never
    runs during a witnessed call (grader/grading/subject/kata.py: Kata.compare), so
    the reference's speed tells the learner's code nothing while it runs.
    """
    with _lock:
        offered = [ref for ref in _offered.get(spec.seed, []) if ref() is not None]
        _offered[spec.seed] = [*offered, weakref.ref(instance)][-KEPT_OFFERS:]


def _witnessed_output(handle: int, key: tuple) -> torch.Tensor | None:
    return _from_witnesses(handle, lambda instance: instance.remembered(key))


def _witnessed_pass(handle: int, key: tuple) -> Any:
    """A cached pass one of the offered witnesses' instances ran, or None."""
    return _from_witnesses(handle, lambda instance: (
        kept.get(key) if (kept := getattr(instance, "kept_passes", None)) is not None
        else None))


def _from_witnesses(handle: int, read: Callable[[GPT], Any]) -> Any:
    """What `read` finds first in the offered witnesses' instances still alive, or None."""
    with _lock:
        instances = [ref() for ref in _offered.get(handle, [])]
    for instance in instances:
        found = read(instance) if instance is not None else None
        if found is not None:
            return found
    return None


def noisy_copy(model: GPT, seed: int, noise: float = NOISE) -> GPT:
    """A new GPT with `model`'s weights plus noise drawn from `seed`; read-only.

    The noise comes from a generator of its own: torch's global one may be the
    one the reference is sampling with.
    """
    copy = copy_of(model)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for weight in copy.parameters():
            scale = float(weight.double().pow(2).mean().sqrt())
            weight.add_(torch.randn(weight.shape, generator=generator) * (noise * scale))
    return copy


def copy_of(model: GPT) -> GPT:
    """A new GPT with a copy of `model`'s weights and nothing else of it (no memo);
    read-only. Copied, not built: building draws every weight at random first,
    from torch's global random state."""
    from grader.model.memo import copy_without_memo

    return copy_without_memo(model).eval().requires_grad_(False)


def _secret(spec: ModelSpec) -> tuple[ModelSpec, int, GPT]:
    with _lock:
        found = _secrets.get(spec.seed) if spec.kind == "hidden" else None
    if found is None:
        raise ValueError(f"{spec!r} is not a model drawn by this grader")
    return found
