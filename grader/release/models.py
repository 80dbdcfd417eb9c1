"""The models a practice case runs, as torch.export programs with no Python source.

A case's arguments name models by ModelSpec: the shipped GPT, or a seeded random
one of other sizes. The copy cannot build either (the GPT class is problem 23's
answer), so each model a case needs is exported once, under a name made from its
spec, and the case's arguments hold a marker with that name.

The training problems' drivers build a GPT of their own for each call, from a
config and a seed (artifacts.trainable_model). The release records which ones the
reference and the mistakes were trained on, and exports each in training mode,
its batch and its length free, so that the copy's driver builds the same model
from its program and a learner's step trains it as it trains the grader's.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

SHIPPED = "shipped"


@dataclass(frozen=True)
class StoredModel:
    """Stands for an exported model among a case's arguments (the codec writes its name)."""

    name: str


def model_name(spec: Any) -> str:
    """The file name of a spec's program: the shipped model's, or one from the random
    model's sizes and seed, so that one spec is exported once however many cases use it."""
    if spec.kind == "shipped":
        return SHIPPED
    if spec.kind != "random":
        raise ValueError(f"a {spec.kind} model cannot be exported")
    key = json.dumps({"config": spec.config, "seed": spec.seed}, sort_keys=True)
    return f"random-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


class Models:
    """The models the cases met so far, by name, to be exported when the copy is written."""

    def __init__(self) -> None:
        self.specs: dict[str, Any] = {}
        # The trainable GPTs built so far, by name: (config, seed).
        self.trained: dict[str, tuple[dict[str, int], int]] = {}

    def marker(self, spec: Any) -> StoredModel:
        name = model_name(spec)
        self.specs.setdefault(name, spec)
        return StoredModel(name)

    def merge(self, other: Models) -> None:
        for spec in other.specs.values():
            self.marker(spec)
        self.trained.update(other.trained)

    @contextmanager
    def recording_trained(self) -> Iterator[None]:
        """Within it, every trainable GPT a driver builds is recorded here."""
        from grader.model import artifacts

        build = artifacts.trainable_model

        def recorded(config: dict[str, int], seed: int) -> Any:
            self.trained.setdefault(trained_name(config, seed), (dict(config), int(seed)))
            return build(config, seed)

        artifacts.trainable_model = recorded
        try:
            yield
        finally:
            artifacts.trainable_model = build

    def trainable(self) -> dict[str, str]:
        """Each trainable GPT's key (trained_key) and the name of its program."""
        return {trained_key(*made): name for name, made in sorted(self.trained.items())}

    def context_lengths(self) -> dict[str, int]:
        from grader.model import artifacts

        return {name: int(artifacts.build_model(spec).context_length)
                for name, spec in sorted(self.specs.items())}

    def programs(self) -> dict[str, bytes]:
        from grader.model import artifacts

        programs = {name: exported_program(artifacts.build_model(spec))
                    for name, spec in sorted(self.specs.items())}
        for name, (config, seed) in sorted(self.trained.items()):
            programs[name] = exported_program(artifacts.trainable_model(config, seed),
                                              trainable=True)
        return programs


def trained_key(config: dict[str, int], seed: int) -> str:
    """How the copy's driver finds a trainable GPT's program (gpt_kata_practice/training.py
    makes the same key from the same description)."""
    return json.dumps({"config": config, "seed": seed}, sort_keys=True)


def trained_name(config: dict[str, int], seed: int) -> str:
    return f"trainable-{hashlib.sha256(trained_key(config, seed).encode()).hexdigest()[:12]}"


# The largest batch a GPT's program takes (the checks use 8 at most).
LARGEST_BATCH = 4096


def exported_program(model: Any, trainable: bool = False) -> bytes:
    """A GPT as a torch.export program: its computation as a graph of torch operations,
    with no Python source. torch.export records the source line of each operation as it
    traces; those are removed, so neither gpt.py nor a path is in it. A `trainable` one
    is exported in training mode. Its batch size is free, as its length is."""
    import torch

    import grader.model.gpt as gpt

    model = model.train() if trainable else model.eval()
    cached = gpt.causal_mask
    # The mask is cached by shape, and a traced shape cannot be a cache key.
    gpt.causal_mask = getattr(cached, "__wrapped__", cached)
    try:
        # torch.export cannot trace a dimension whose largest size is 1.
        length = (torch.export.Dim("T", min=1, max=model.context_length)
                  if model.context_length > 1 else None)
        # The batch is free for every model: the statements' examples run the shipped
        # GPT on a batch (problem 24's two windows), as the checks may.
        example = torch.zeros(2, min(2, model.context_length), dtype=torch.long)
        shapes = {0: torch.export.Dim("B", min=1, max=LARGEST_BATCH)}
        if length:
            shapes[1] = length
        program = torch.export.export(model, (example,), dynamic_shapes=(shapes or None,))
    finally:
        gpt.causal_mask = cached
    for node in program.graph.nodes:
        for key in ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node"):
            node.meta.pop(key, None)
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    return buffer.getvalue()
