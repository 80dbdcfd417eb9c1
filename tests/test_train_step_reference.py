"""The training step's harness, reference and mistakes, against a loop written out here.

A training step changes its model, so the harness must build a model and an
optimizer of its own for every run: never the worker's shared, frozen models,
and never one left over from an earlier run.
"""

from __future__ import annotations

import math
import sys
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from grader.checks.train_step import check_train_step as checks
from grader.grading.subject.reference import load_reference
from grader.grading.values.equality import outcome_of
from grader.model import artifacts
from grader.model.gpt import GPT, GPTConfig
from grader.registry import find
from grader.sandbox.worker import harnesses


@pytest.fixture(scope="module")
def reference_module():
    reference = load_reference(find("train-step"))
    return sys.modules[type(reference).__module__]


def nanogpt_loop(config: dict, seed: int, lr: float, weight_decay: float,
                 xs: torch.Tensor, ys: torch.Tensor) -> tuple[list[float], dict]:
    """The well-known training loop, written out without the harness or the reference."""
    torch.manual_seed(seed)
    model = GPT(GPTConfig(**config))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    losses = []
    for x, y in zip(xs, ys):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, model.state_dict()


@pytest.mark.parametrize("case_id", list(checks.cases()))
def test_the_reference_trains_as_the_written_out_loop(reference_module, case_id):
    model, optimizer, xs, ys = checks.cases()[case_id]
    losses, weights = harnesses.train_steps(reference_module, model, optimizer, xs, ys)
    want_losses, want_weights = nanogpt_loop(model["config"], model["seed"], optimizer["lr"],
                                             optimizer["weight_decay"], xs, ys)
    assert losses == pytest.approx(want_losses, rel=1e-5)
    for name, weight in want_weights.items():
        torch.testing.assert_close(weights[name], weight, rtol=0,
                                   atol=checks.TRAINED_WEIGHTS_ATOL / 10)


def test_every_run_starts_from_a_new_model(reference_module):
    """The same run twice gives the same answer: nothing of the first run is reused."""
    args = checks.cases()["five-steps-on-the-corpus"]
    first = harnesses.train_steps(reference_module, *args)
    second = harnesses.train_steps(reference_module, *args)
    assert first[0] == second[0]
    assert all(torch.equal(first[1][k], second[1][k]) for k in first[1])


def test_the_trainable_model_is_fresh_and_learns():
    a = artifacts.trainable_model(checks.SMALL, 0)
    b = artifacts.trainable_model(checks.SMALL, 0)
    assert a is not b and a.training
    assert all(p.requires_grad for p in a.parameters())
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not getattr(a, "_remembers", False)  # outputs are never looked up
    state = torch.random.get_rng_state()
    artifacts.trainable_model(checks.SMALL, 5)
    assert torch.equal(torch.random.get_rng_state(), state)  # the caller's state is kept


def test_an_untrained_model_loses_about_ln_vocab_size(reference_module):
    """A fresh model guesses almost uniformly: its first loss is close to ln 40."""
    losses, _ = harnesses.train_steps(reference_module, *checks.cases()["one-step"])
    assert abs(losses[0] - math.log(40)) < 0.05


def test_the_loss_falls_on_the_same_batch(reference_module):
    losses, _ = harnesses.train_steps(reference_module,
                                      *checks.cases()["the-same-batch-five-times"])
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))


@pytest.mark.parametrize("mistake", checks.MISTAKES, ids=lambda m: m.name[:40])
def test_every_mistake_differs_from_the_reference(reference_module, mistake):
    """Each named mistake is told apart from the right step on the fixed cases."""
    args = checks.cases()["five-steps-on-the-corpus"]
    right = ("value", harnesses.train_steps(reference_module, *args))
    for run in mistake.runs:
        assert not checks.same_training(outcome_of(run, *args), right)


def test_a_returned_tensor_is_named(reference_module):
    class Solution:
        def train_step(self, model, optimizer, x, y):
            optimizer.zero_grad()
            loss = checks.flat_loss(model, x, y)
            loss.backward()
            optimizer.step()
            return loss

    returned, _ = harnesses.train_steps(SimpleNamespace(Solution=Solution),
                                        *checks.cases()["one-step"])
    assert isinstance(returned[0], torch.Tensor)
    with pytest.raises(AssertionError, match="returned a tensor at step 1, not a float"):
        checks.expect_floats(returned)


def test_weights_left_nan_by_the_last_step_fail(reference_module):
    """Right losses with weights that the last step made nan: nan compares false with
    every bound, so the check must ask whether the error is within it, not beyond."""
    from grader.grading.subject.kata import Call

    args = checks.cases()["one-step"]
    losses, weights = harnesses.train_steps(reference_module, *args)
    broken = {name: weight.clone() for name, weight in weights.items()}
    name = next(iter(broken))
    broken[name][0] = float("nan")
    call = Call(method="train_step", args=tuple(args), named={},
                outcome=("value", (losses, broken)), record=None)
    checks.judge((losses, weights), (losses, weights), call)  # the reference itself passes
    with pytest.raises(AssertionError, match=f"the weights `{name}` differ"):
        checks.judge((losses, broken), (losses, weights), call)
