"""The learner's own GPT (problem 23) with the shipped weights, for `talk --yours`;
or their modern GPT (problem 35) with the shipped modern weights, for
`talk --model modern --yours`; or either with the weights of a run `train` wrote,
for `talk --model RUN --yours`.

The learner's class is imported and built only inside a sandboxed worker,
never in the grader. It is loaded with data/model.safetensors (or
data/llama.safetensors) by parameter name through `parts.build_loaded`, the code
the gpt and modern-gpt problems are graded with, so that a wrong name or shape is
refused with the message grading gives. A run's weights cannot be read by the
worker (the sandbox keeps it out of the run's folder): the grader hands them to it
once (`hand`, called by the harness `take_weights`), and the model's description
names them by their handle (`handle_of`), which it carries as its seed.

For `train --yours`, `initial_model` gives the weights `gpt-kata train` starts from,
which the worker loads into the learner's model by name. It lives here because the
worker may import only what the fork server preloaded (grader/sandbox/host/forkserver.py).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
from pathlib import Path

import torch

from grader.model.spec import ModelSpec

CLASS = "GPT"  # problem 23's class, as the registry names it
MODERN_CLASS = "Llama"  # problem 35's
# A module name of its own: the worker's submission is already "submission".
MODULE = "kata_your_gpt"


def is_modern(config: dict[str, int | float]) -> bool:
    """Whether a config is the modern decoder's (LlamaConfig): it has key/value heads."""
    return "n_kv_head" in config


def initial_model(config: dict[str, int | float], seed: int) -> torch.nn.Module:
    """A new GPT, or modern decoder for a modern config, as `train` builds it with
    `seed`, in training mode, leaving the caller's random state as it was."""
    from grader.model.artifacts import seeded, trainable_model
    from grader.model.llama import Llama, LlamaConfig

    if not is_modern(config):
        return trainable_model({k: int(v) for k, v in config.items()}, seed)
    # Seeded as torch.manual_seed would, which is what `train` calls.
    return seeded(lambda: Llama(LlamaConfig(**config)), seed).train()


# The weights the grader handed this worker, by their handle.
_HANDED: dict[int, dict[str, torch.Tensor]] = {}


def handle_of(tensors: dict[str, torch.Tensor]) -> int:
    """A handle for weights, from their names, dtypes, shapes and bytes: never 0, the
    shipped weights' seed, and the same on both sides of the protocol."""
    import hashlib

    digest = hashlib.blake2b(digest_size=8)
    for name in sorted(tensors):
        tensor = tensors[name].detach().contiguous()
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)};".encode())
        digest.update(tensor.numpy().tobytes())
    return int.from_bytes(digest.digest(), "big") >> 1 or 1


def hand(tensors: dict[str, torch.Tensor]) -> int:
    """Keep weights the grader handed this worker; their handle, made here."""
    if not isinstance(tensors, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in tensors.items()):
        raise TypeError("weights are tensors by name")
    handle = handle_of(tensors)
    _HANDED[handle] = {k: v.detach().clone() for k, v in tensors.items()}
    return handle


def spec_of(gpt_file: Path, config: dict[str, int | float], handle: int = 0) -> ModelSpec:
    """The description a worker builds the learner's GPT from: their file, the sizes,
    and the handle of the run's weights it was handed (0: the shipped weights).

    A model description carries whole sizes only: a modern model's float settings
    (rope_base, norm_eps) must be LlamaConfig's defaults, which the worker builds with.
    """
    from grader.model.llama import LlamaConfig

    sizes = {k: v for k, v in config.items() if isinstance(v, int)}
    if is_modern(sizes) and LlamaConfig(**sizes).to_dict() != dict(config):
        raise ValueError("the modern model's rope_base and norm_eps are not LlamaConfig's "
                         "defaults, which a model description cannot carry")
    return ModelSpec("yours", sizes, handle, str(gpt_file))


def build(spec: ModelSpec) -> torch.nn.Module:
    """The learner's GPT, loaded with the shipped weights, or those handed to this
    worker under the handle the spec carries as its seed; in a worker only.

    Whatever the learner's file raises is left to the caller, which reports it
    as the learner's error.
    """
    from grader.model.parts import build_loaded, given, weights
    from grader.reuse import source_spec

    loader = source_spec(MODULE, spec.path)
    if loader is None or loader.loader is None:
        raise ImportError(f"cannot load {spec.path}")
    module = importlib.util.module_from_spec(loader)
    sys.modules[MODULE] = module  # dataclasses look their module up while it runs
    with contextlib.redirect_stdout(io.StringIO()):
        loader.loader.exec_module(module)
        modern = is_modern(spec.config)
        name = MODERN_CLASS if modern else CLASS
        cls = getattr(module, name, None)
        if not isinstance(cls, type):
            raise ImportError(f"no class {name} in {Path(spec.path).name}")
        if spec.seed:
            if spec.seed not in _HANDED:
                raise LookupError("the run's weights were not handed to this worker")
            known = given(_HANDED[spec.seed])
        elif modern:
            from grader.model.artifacts import shipped_llama

            known = given(shipped_llama().state_dict())
        else:
            known = weights(ModelSpec("shipped"))
        made = build_loaded(cls, spec.config, known)
    return made.requires_grad_(False)
