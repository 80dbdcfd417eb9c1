"""The models a practice case runs, as torch.export programs with no Python source.

A case's arguments name models by ModelSpec: the shipped GPT, or a seeded random
one of other sizes. The copy cannot build either (the GPT class is problem 23's
answer), so each model a case needs is exported once, under a name made from its
spec, and the case's arguments hold a marker with that name.
"""

from __future__ import annotations

import hashlib
import io
import json
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

    def marker(self, spec: Any) -> StoredModel:
        name = model_name(spec)
        self.specs.setdefault(name, spec)
        return StoredModel(name)

    def context_lengths(self) -> dict[str, int]:
        from grader.model import artifacts

        return {name: int(artifacts.build_model(spec).context_length)
                for name, spec in sorted(self.specs.items())}

    def programs(self) -> dict[str, bytes]:
        from grader.model import artifacts

        return {name: exported_program(artifacts.build_model(spec))
                for name, spec in sorted(self.specs.items())}


def exported_program(model: Any) -> bytes:
    """A GPT as a torch.export program: its computation as a graph of torch operations,
    with no Python source. torch.export records the source line of each operation as it
    traces; those are removed, so neither gpt.py nor a path is in it."""
    import torch

    import grader.model.gpt as gpt

    model = model.eval()
    cached = gpt.causal_mask
    # The mask is cached by shape, and a traced shape cannot be a cache key.
    gpt.causal_mask = getattr(cached, "__wrapped__", cached)
    try:
        # torch.export cannot trace a dimension whose largest size is 1.
        length = (torch.export.Dim("T", min=1, max=model.context_length)
                  if model.context_length > 1 else None)
        example = torch.zeros(1, min(2, model.context_length), dtype=torch.long)
        program = torch.export.export(model, (example,),
                                      dynamic_shapes=({1: length} if length else None,))
    finally:
        gpt.causal_mask = cached
    for node in program.graph.nodes:
        for key in ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node"):
            node.meta.pop(key, None)
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    return buffer.getvalue()
