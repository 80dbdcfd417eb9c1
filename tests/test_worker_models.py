"""The models a worker hands a submission (grader/sandbox/worker/worker_models.py):
each call starts from the pristine weights, and a call that wrote to them is told."""

from __future__ import annotations

import pytest
import torch

from grader.model import artifacts
from grader.model.spec import ModelSpec
from grader.sandbox.worker.worker_models import WorkerModels

SHIPPED = ModelSpec()


@pytest.fixture(autouse=True)
def own_shipped_model(monkeypatch: pytest.MonkeyPatch) -> torch.nn.Module:
    """A shipped GPT of the tests' own: build_model hands a worker the process's one
    shipped model, on which WorkerModels installs its guarded memo and turns gradients
    off, and these tests write to its weights and hook it. In the test process that
    model serves every later test of the same xdist worker."""
    own = artifacts.load_model()
    monkeypatch.setattr(artifacts, "shipped_model", lambda: own)
    return own


def pristine() -> dict[str, torch.Tensor]:
    """The shipped weights read again from their file (build_model hands the worker
    the process's one shipped model)."""
    return artifacts.load_model().state_dict()


def same_weights(model: torch.nn.Module, weights: dict[str, torch.Tensor]) -> bool:
    return all(torch.equal(value, weights[name]) for name, value in model.state_dict().items())


def test_a_call_that_writes_is_told_and_the_next_starts_pristine(
        own_shipped_model: torch.nn.Module) -> None:
    models = WorkerModels()
    model = models.model(SHIPPED)
    assert model is own_shipped_model  # not the process's shared one
    assert not models.changed([model])  # a call that only read
    with torch.no_grad():
        model.head.weight.data.zero_()  # no version counter moves
        model.blocks[0].ln_1.bias.data.add_(1.0)
    assert models.changed([model])
    again = models.model(SHIPPED)
    assert again is model and same_weights(again, pristine())
    assert not models.changed([again])


def test_a_write_put_back_and_a_hook_are_no_change_of_the_weights() -> None:
    models = WorkerModels()
    model = models.model(SHIPPED)
    with torch.no_grad():
        saved = model.head.weight.clone()
        model.head.weight.data.mul_(2.0)
        model.head.weight.data.copy_(saved)
    model.head.register_forward_hook(lambda module, args, out: out)
    assert not models.changed([model])
    assert same_weights(models.model(SHIPPED), pristine())
