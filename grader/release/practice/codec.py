"""Values as JSON, as the worker protocol writes them; the models the copy runs.

Written as the worker protocol's structs encode them, with no timestamp and each
model's sizes in one order (release/models.py), so the same values give the same file.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
import torch

from grader.locale import tr
from grader.model.config import GPTConfig, no_tokens, not_token_ids, too_long
from grader.model.spec import ModelSpec
from grader.sandbox.wire import encoding as wire

# Relative: this package is grader.release.practice in the kata and gpt_kata_practice
# in the copy.
from .program import read_graph

MODELS = Path(__file__).with_name("models")


@cache
def stored() -> dict[str, Any]:
    """The copy's cases.json (its cases, models and trainable GPTs), read once."""
    return json.loads(Path(__file__).with_name("cases.json").read_text(encoding="utf-8"))


class ExportedGPT(torch.nn.Module):
    """A GPT a case runs (the shipped one, or a seeded random one), from its exported
    graphs (no Python source of it here), refusing what the model refuses with the
    model's own error. While `calls` is a list, each call adds to it the number of new
    tokens and of cached ones, as the instructor's grader sees a model's calls."""

    def __init__(self, name: str, context_length: int | None = None) -> None:
        super().__init__()
        self.name = name
        self.program = load_program(name)
        entry = stored()["models"][name]
        self.context_length = context_length or int(entry["context_length"])
        # As the kata's GPT carries it: code that reads model.config runs here too.
        self.config = GPTConfig(**entry["config"])
        self.calls: list[list[int]] | None = None

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        self.check(context, 0)
        return self.program(context)

    def forward_with_cache(self, context: torch.Tensor, cache: Any = None) -> tuple[Any, Any]:
        """The logits of the new tokens in `context`, placed after the `cache`'s, and the
        cache of them all: a list of one (keys, values) per layer."""
        past = 0 if cache is None else int(cache[0][0].shape[2])
        self.check(context, past)
        if context.shape[0] != 1:
            raise ValueError(tr("this copy's model runs forward_with_cache on a batch of one, "
                                "(1, T), as problem 15 does; got a batch of {rows}",
                                rows=context.shape[0]))
        variant = (f"{'next' if cache is not None else 'first'}-"
                   f"{'many' if context.shape[1] > 1 else 'one'}")
        program = cached_program(self.name, variant)
        logits, new_cache = (program(context) if cache is None
                             else program(context, [tuple(pair) for pair in cache]))
        return logits, [tuple(pair) for pair in new_cache]

    def check(self, context: Any, past: int) -> None:
        if not isinstance(context, torch.Tensor) or context.dim() != 2 or (
                context.dtype != torch.long):
            got = (f"{context.dtype} of shape {tuple(context.shape)}"
                   if isinstance(context, torch.Tensor) else type(context).__name__)
            raise ValueError(not_token_ids(got))
        seen = past + context.shape[1]
        if context.shape[1] < 1:
            raise ValueError(no_tokens())
        if seen > self.context_length:
            raise ValueError(too_long(self.context_length, seen))
        if self.calls is not None:
            self.calls.append([int(context.shape[1]), past])


def load_program(name: str) -> torch.nn.Module:
    """A model of the copy's, by name, as a module to call (program.py)."""
    return read_graph(MODELS / f"{name}.safetensors")


@cache
def cached_program(name: str, variant: str) -> torch.nn.Module:
    """One of a model's forward_with_cache programs (release/models.py's CACHED_VARIANTS),
    loaded once."""
    if not (MODELS / f"{name}.cached-{variant}.safetensors").is_file():
        raise ValueError(tr("this copy holds no forward_with_cache of this model ({variant}): "
                            "only the models of problem 15's cases have one", variant=variant))
    return load_program(f"{name}.cached-{variant}")


@cache
def stored_model(name: str) -> torch.nn.Module:
    return ExportedGPT(name)


class Exported(ModelSpec):
    """The spec of a model whose program the release exported: the only model a stored
    value may hold (a hidden model's, say, is drawn anew by each grade)."""


def encode(value: Any) -> Any:
    """`value` as JSON data, written as the worker protocol writes it (the structs of
    grader/sandbox/wire/encoding.py, bytes in base64); TypeError if it cannot be stored."""
    refuse_unexported(value)
    return msgspec.to_builtins(wire.encode(value))


def refuse_unexported(value: Any) -> None:
    if isinstance(value, ModelSpec) and not isinstance(value, Exported):
        raise TypeError(f"cannot store {value!r}: the copy holds no program of it")
    if isinstance(value, (list, tuple)):
        for item in value:
            refuse_unexported(item)
    elif isinstance(value, dict):
        for pair in value.items():
            refuse_unexported(pair)


def decode(value: Any) -> Any:
    """The value `encode` wrote, each model spec the exported program of its model."""
    return exported(wire.decode(value))


def decode_specs(value: Any) -> Any:
    """The value `encode` wrote, each model left the spec it was made from: what a
    failure's inputs describe ("the shipped model"), not the program that runs it."""
    return wire.decode(value)


def exported(value: Any) -> Any:
    if isinstance(value, ModelSpec):
        return stored_model(model_name(value))
    if isinstance(value, (list, tuple)):
        return type(value)(exported(v) for v in value)
    if isinstance(value, dict):
        return {k: exported(v) for k, v in value.items()}
    return value


def model_name(spec: ModelSpec) -> str:
    """The file name of a spec's program: the shipped model's, or one from the random
    model's sizes and seed, so that one spec is exported once however many cases use it."""
    if spec.kind == "shipped":
        return "shipped"
    if spec.kind != "random":
        raise ValueError(f"a {spec.kind} model cannot be exported")
    key = json.dumps({"config": spec.config, "seed": spec.seed}, sort_keys=True)
    return f"random-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
