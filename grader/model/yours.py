"""The learner's own GPT (problem 23) with the shipped weights, for `talk --yours`.

The learner's class is imported and built only inside a sandboxed worker,
never in the grader. It is loaded with data/model.safetensors by parameter
name through `parts.build_loaded`, the code the gpt problem is graded with, so
that a wrong name or shape is refused with the message grading gives.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
from pathlib import Path

import torch

from grader.sandbox.protocol import ModelSpec

CLASS = "GPT"  # problem 23's class, as the registry names it
# A module name of its own: the worker's submission is already "submission".
MODULE = "kata_your_gpt"


def spec_of(gpt_file: Path, config: dict[str, int]) -> ModelSpec:
    """The description a worker builds the learner's GPT from: their file, the sizes."""
    return ModelSpec("yours", dict(config), 0, str(gpt_file))


def build(spec: ModelSpec) -> torch.nn.Module:
    """The learner's GPT, loaded with the shipped weights; in a worker only.

    Whatever the learner's file raises is left to the caller, which reports it
    as the learner's error.
    """
    from grader.model.parts import build_loaded, weights

    loader = importlib.util.spec_from_file_location(MODULE, spec.path)
    if loader is None or loader.loader is None:
        raise ImportError(f"cannot load {spec.path}")
    module = importlib.util.module_from_spec(loader)
    sys.modules[MODULE] = module  # dataclasses look their module up while it runs
    with contextlib.redirect_stdout(io.StringIO()):
        loader.loader.exec_module(module)
        cls = getattr(module, CLASS, None)
        if not isinstance(cls, type):
            raise ImportError(f"no class {CLASS} in {Path(spec.path).name}")
        made = build_loaded(cls, spec.config, weights(ModelSpec("shipped")))
    return made.requires_grad_(False)
