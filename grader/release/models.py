"""The models a practice case runs, traced by torch.export and written as graphs of
torch operations with no Python source (practice/program.py).

A check's cases name models by ModelSpec: the shipped GPT, or a seeded random one
of other sizes. The copy cannot build either (the GPT class is problem 23's answer),
so each model a case needs is exported once, under a name made from its spec; the
case stores the spec as `Exported`, and the copy runs the program of that name.

The training problems' drivers build a GPT of their own for each call, from a
config and a seed (artifacts.trainable_model). The release records which ones the
reference and the mistakes were trained on, and exports each in training mode,
its batch and its length free, so that the copy's driver builds the same model
from its program and a learner's step trains it as it trains the grader's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from grader.release.practice.codec import Exported, model_name

SHIPPED = "shipped"


class Models:
    """The models the cases met so far, by name, to be exported when the copy is written."""

    def __init__(self) -> None:
        self.specs: dict[str, Any] = {}
        # The trainable GPTs built so far, by name: (config, seed).
        self.trained: dict[str, tuple[dict[str, int], int]] = {}
        # The models whose forward_with_cache the copy needs too (problem 15's loop).
        self.cached: set[str] = set()

    def exported(self, spec: Any) -> Exported:
        """`spec`, kept to be exported, as a case stores it for the copy to run its
        program: what its name holds alone (the shipped model's no sizes, a random
        one's in one order), however a check built it, so that two releases write the
        same bytes."""
        self.specs.setdefault(model_name(spec), spec)
        if spec.kind == SHIPPED:
            return Exported(SHIPPED)
        return Exported(spec.kind, dict(sorted(spec.config.items())), spec.seed)

    def merge(self, other: Models) -> None:
        for spec in other.specs.values():
            self.exported(spec)
        self.trained.update(other.trained)
        self.cached |= other.cached

    @contextmanager
    def recording_trained(self) -> Iterator[None]:
        """Within it, every trainable GPT a driver builds is recorded here."""
        from grader.model import artifacts

        build = artifacts.trainable_model

        def recorded(config: dict[str, int], seed: int) -> Any:
            self.record_trained(config, seed)
            return build(config, seed)

        artifacts.trainable_model = recorded
        try:
            yield
        finally:
            artifacts.trainable_model = build

    def record_trained(self, config: dict[str, int], seed: int) -> None:
        """A trainable GPT the copy builds: a case's, or one a statement's example trains."""
        self.trained.setdefault(trained_name(config, seed), (dict(config), int(seed)))

    def trainable(self) -> dict[str, str]:
        """Each trainable GPT's key (trained_key) and the name of its program."""
        return {trained_key(*made): name for name, made in sorted(self.trained.items())}

    def entries(self) -> dict[str, dict[str, Any]]:
        """What cases.json says of each model: the context length its program reads, and
        its config, which the copy's model carries as the kata's GPT does (`.config`)."""
        from grader.model import artifacts

        built = {name: artifacts.build_model(spec) for name, spec in sorted(self.specs.items())}
        return {name: {"context_length": int(model.context_length),
                       "config": model.config.to_dict()} for name, model in built.items()}

    def programs(self) -> dict[str, bytes]:
        from grader.model import artifacts

        programs = {name: exported_program(artifacts.build_model(spec))
                    for name, spec in sorted(self.specs.items())}
        traced: dict[str, Any] = {}  # a trainable GPT's program, by its config
        for name, (config, seed) in sorted(self.trained.items()):
            programs[name] = trainable_program(artifacts.trainable_model(config, seed),
                                               config, traced)
        for name in sorted(self.cached):
            programs.update(cached_programs(artifacts.build_model(self.specs[name]), name))
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
    with no Python source. A `trainable` one is exported in training mode. Its batch
    size is free, as its length is: the statements' examples run the shipped GPT on a
    batch (problem 24's two windows), as the checks may."""
    return saved(gpt_program(model, trainable))


def gpt_program(model: Any, trainable: bool = False) -> Any:
    import torch

    model = model.train() if trainable else model.eval()
    return export(model, torch.zeros(2, min(2, model.context_length), dtype=torch.long),
                  model.context_length)


def trainable_program(model: Any, config: dict[str, int], traced: dict[str, Any]) -> bytes:
    """A trainable GPT's program, its architecture traced once: tracing takes a second
    or more, and the checks train many GPTs of one config from other seeds. A GPT of a
    config traced already gets that program with its own weights, which is byte for
    byte the program its own trace gives (the graph holds no weight)."""
    key = json.dumps(config, sort_keys=True)
    program = traced.get(key)
    weights = model.state_dict(keep_vars=True)
    if program is None or program.state_dict.keys() != weights.keys() or program.constants:
        program = traced[key] = gpt_program(model, trainable=True)
    for name in program.state_dict:
        program.state_dict[name] = weights[name]
    if any(program.state_dict[name] is not weights[name] for name in weights):
        # A torch whose program hands out a copy of its weights: traced afresh.
        program = traced[key] = gpt_program(model, trainable=True)
    return saved(program)


def export(module: Any, example: Any, longest: int) -> Any:
    """`module` on inputs shaped like `example`, (batch, length, ...), as a torch.export
    program whose batch and length (up to `longest`) are free."""
    import torch

    shapes = {0: torch.export.Dim("B", min=1, max=LARGEST_BATCH)}
    if longest > 1:  # torch.export cannot trace a dimension whose largest size is 1
        shapes[1] = torch.export.Dim("T", min=1, max=longest)
    with traceable_masks():
        return torch.export.export(module, (example,), dynamic_shapes=(shapes,))


@contextmanager
def traceable_masks() -> Iterator[None]:
    """The causal mask made afresh at each call while a program is traced: it is cached
    by shape, and a traced shape cannot be a cache key."""
    import grader.model.gpt as gpt
    import grader.model.llama as llama

    cached = gpt.causal_mask
    gpt.causal_mask = llama.causal_mask = getattr(cached, "__wrapped__", cached)
    try:
        yield
    finally:
        gpt.causal_mask = llama.causal_mask = cached


def saved(program: Any) -> bytes:
    """A program's graph and weights as the copy reads them (practice/program.py): each
    operation and its inputs, never the source line, stack or path torch.export records
    of it as it traces."""
    from grader.release.practice.program import graph_bytes

    return graph_bytes(program)


def example_programs() -> dict[str, bytes]:
    """What the statements' examples run in a copy beside the whole shipped GPT: each
    of its blocks' attention and MLP (the copy builds the embeddings and LayerNorms
    from the shipped weights with torch's own layers). Never the modern model: its
    graph would show Track 4's answers; its outputs on the examples' inputs are stored
    instead (modern_outputs)."""
    import torch

    from grader.model import artifacts

    gpt = artifacts.shipped_model()
    x = torch.zeros(2, 2, gpt.config.n_embd)
    return {f"{SHIPPED}.blocks.{i}.{name}": saved(export(getattr(block, name), x,
                                                         gpt.context_length))
            for i, block in enumerate(gpt.blocks) for name in ("attn", "mlp")}


def modern_outputs(inputs: list[Any]) -> list[Any]:
    """The shipped modern model's logits on each of `inputs` (token ids), which the
    copy's stand-in for it gives back (practice/shipped.py)."""
    import torch

    from grader.model import artifacts

    modern = artifacts.shipped_llama()
    with torch.no_grad():
        return [modern(ids) for ids in inputs]


def cached_programs(model: Any, name: str) -> dict[str, bytes]:
    """A GPT's forward_with_cache(context, cache) as programs, for a batch of one (the
    KV cache's statement and checks use no other): one for the first call (no cache)
    and one for the next, each for one new token and for several. torch.export cannot
    make one program of a length that may be 1 and may not: a length of one broadcasts
    where a longer one cannot. Each program's logits and cache equal the model's."""
    import torch
    import torch.fx.experimental._config as fx

    class WithCache(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, context: Any, cache: Any = None) -> Any:
            return self.model.forward_with_cache(context, cache)

    config, longest = model.config, model.context_length
    head_size = config.n_embd // config.n_head
    programs = {}
    # Traced at lengths of 2: a traced size of 1 would be taken for a constant.
    for variant, (new, past) in CACHED_VARIANTS.items():
        if max(new, 2) + past > longest:
            continue  # a window too short for it
        args: tuple = (torch.zeros(1, 2 if new else 1, dtype=torch.long),)
        # Where 2 is the only length of several that fits, it is the program's own (torch
        # makes no Dim whose least and most are one).
        dims: tuple = ({1: torch.export.Dim("T", min=2, max=longest - past)}
                       if new and longest - past > 2 else None,)
        if past:
            cached = torch.export.Dim("P", min=1, max=longest - 1)
            # Each its own tensor: tensors given twice would be traced as one.
            args += ([(torch.zeros(1, config.n_head, 2, head_size),
                       torch.zeros(1, config.n_head, 2, head_size))
                      for _ in range(config.n_layer)],)
            dims += ([({2: cached}, {2: cached})] * config.n_layer,)
        # The length check is the copy's (codec.py), where the cache's length is known;
        # sizes are taken for other than 1, as the variants keep a length of one apart.
        model.context_length = 2 ** 31
        try:
            with traceable_masks(), fx.patch(backed_size_oblivious=True):
                program = torch.export.export(WithCache(), args, dynamic_shapes=dims,
                                              prefer_deferred_runtime_asserts_over_guards=True)
        finally:
            model.context_length = longest
        programs[f"{name}.cached-{variant}"] = saved(program)
    return programs


# The programs of a GPT's forward_with_cache: (several new tokens, a cache given).
CACHED_VARIANTS = {"first-one": (0, 0), "first-many": (1, 0), "next-one": (0, 1),
                   "next-many": (1, 1)}
