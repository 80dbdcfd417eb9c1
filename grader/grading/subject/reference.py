"""The reference solution in the grader's own process (it is trusted code): loading
it, and giving it (or a known mistake run here) fresh copies of a check's arguments."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import torch

from grader.model import artifacts, forward_store
from grader.model.memo import remember_outputs
from grader.model.spec import ModelSpec
from grader.registry import Problem


def load_reference(problem: Problem) -> Any:
    spec = importlib.util.spec_from_file_location(
        f"gpt_kata_reference_{problem.slug.replace('-', '_')}", problem.reference
    )
    assert spec and spec.loader, problem.reference
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # so its classes and helpers can be found by name
    spec.loader.exec_module(module)
    if problem.module:
        from grader.model.parts import ModuleDriver

        return ModuleDriver(getattr(module, problem.module))
    return module.Solution()


def fresh(value: Any) -> Any:
    """An argument as the grader's own object, for a call made in this process.

    A ModelSpec becomes its model (shared and only read: models are cached); a
    tensor, dict or generator is copied, so that the reference or a mistake run
    here cannot change what another call sees.
    """
    if isinstance(value, ModelSpec):
        store = forward_store.in_use()
        model = artifacts.build_model(value)
        if store is None or getattr(model, "_remembers", False):
            return remember_outputs(model)
        store.keep(value, remember_outputs(model, also=store.lookup(value)))
        return model
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, torch.Generator):
        copy = torch.Generator()
        copy.set_state(value.get_state())
        return copy
    return value


def fresh_args(args: Iterable[Any]) -> list[Any]:
    return [fresh(a) for a in args]


def run_harness(method: str, module: Any, args: Sequence[Any],
                kwargs: dict[str, Any] | None = None) -> Any:
    """The harness a call's `method` names (grader/sandbox/worker/harness_ref.py) on `module`,
    here in the grader (the same code the worker runs on the submission)."""
    from grader.sandbox.worker import harness_ref

    name = harness_ref.harness_name(method)
    if name is None:
        raise ValueError(f"{method!r} names no harness")
    return harness_ref.run_harness(name, module, *args, **(kwargs or {}))
