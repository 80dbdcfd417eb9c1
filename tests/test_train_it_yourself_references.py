"""The references of problems 26-28 against what they claim to be: torch.optim.AdamW,
the schedule `gpt-kata train` follows, and torch.nn.utils.clip_grad_norm_.

The grader judges learners against these references, so each is checked here
against torch itself (or train's own code), never against its own outputs.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks.adamw import check_adamw
from grader.model.training import TrainSettings, learning_rate
from tests.conftest import reference_module, reference_solution


def reference(folder: str):
    return reference_solution(folder)


@pytest.mark.parametrize("settings", [dict(lr=1e-3), dict(lr=1e-1, weight_decay=0.5),
                                      dict(lr=1e-2, betas=(0.8, 0.95), eps=1e-3,
                                           weight_decay=0.0)])
def test_adamw_follows_torch_step_for_step(settings: dict) -> None:
    solution = reference("26-adamw")
    generator = torch.Generator().manual_seed(0)
    weights = [torch.randn(s, generator=generator) for s in ((5, 4), (4,))]
    leaves = [w.clone().requires_grad_(True) for w in weights]
    optimizer = torch.optim.AdamW(leaves, **settings)
    full = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01, **settings}
    mine, avgs, sqs = weights, [torch.zeros_like(w) for w in weights], \
        [torch.zeros_like(w) for w in weights]
    for step in range(30):
        grads = [torch.randn(w.shape, generator=generator) for w in weights]
        for leaf, grad in zip(leaves, grads):
            leaf.grad = grad.clone()
        optimizer.step()
        mine, avgs, sqs = solution.adamw_step(mine, grads, avgs, sqs, step, full["lr"],
                                              full["betas"], full["eps"],
                                              full["weight_decay"])
        for leaf, p, m, v in zip(leaves, mine, avgs, sqs):
            state = optimizer.state[leaf]
            assert torch.allclose(p, leaf.detach(), rtol=1e-5, atol=1e-6)
            # lerp_ and beta1 * m + (1 - beta1) * g round apart by about 1e-7 of the
            # terms' size, which an entry near 0 shows in full.
            for mine_, torchs in ((m, state["exp_avg"]), (v, state["exp_avg_sq"])):
                scale = float(torchs.abs().max())
                assert torch.allclose(mine_, torchs, rtol=1e-5, atol=1e-6 * scale)


def test_the_schedule_is_trains() -> None:
    solution, s = reference("27-lr-schedule"), TrainSettings()
    for step in range(s.steps + 500):
        assert solution.learning_rate(step, s.learning_rate, s.min_learning_rate,
                                      s.warmup_steps, s.steps) == learning_rate(step, s)


def test_the_schedules_landmarks() -> None:
    lr = reference("27-lr-schedule").learning_rate
    assert lr(0, 3e-3, 3e-4, 100, 3000) == pytest.approx(3e-3 / 100)
    assert lr(99, 3e-3, 3e-4, 100, 3000) == pytest.approx(3e-3)
    assert lr(100, 3e-3, 3e-4, 100, 3000) == pytest.approx(3e-3)
    assert lr(1550, 3e-3, 3e-4, 100, 3000) == pytest.approx((3e-3 + 3e-4) / 2)
    assert lr(3000, 3e-3, 3e-4, 100, 3000) == pytest.approx(3e-4)
    assert lr(5000, 3e-3, 3e-4, 100, 3000) == pytest.approx(3e-4)  # capped, not climbing back
    assert lr(0, 1e-3, 0.0, 0, 10) == pytest.approx(1e-3)


@pytest.mark.parametrize("scale, max_norm", [(1.0, 1.0), (1.0, 100.0), (30.0, 0.5),
                                             (1e-6, 1e-6)])
def test_clipping_is_clip_grad_norm_(scale: float, max_norm: float) -> None:
    solution = reference("28-clip-grad-norm")
    generator = torch.Generator().manual_seed(1)
    shapes = ((4, 3), (3,), (2, 2))
    mine = [torch.nn.Parameter(torch.zeros(s)) for s in shapes]
    torchs = [torch.nn.Parameter(torch.zeros(s)) for s in shapes]
    for i, (a, b) in enumerate(zip(mine, torchs)):
        if i != 1:  # the second has no gradient
            a.grad = torch.randn(a.shape, generator=generator) * scale
            b.grad = a.grad.clone()
    total = solution.clip_grad_norm(mine, max_norm)
    expected = torch.nn.utils.clip_grad_norm_(torchs, max_norm)
    assert torch.allclose(total, expected, rtol=1e-6, atol=0)
    assert mine[1].grad is None
    for a, b in zip(mine, torchs):
        if b.grad is not None:
            assert torch.allclose(a.grad, b.grad, rtol=1e-6, atol=0)


def test_clipping_without_gradients_returns_zero() -> None:
    params = [torch.nn.Parameter(torch.ones(2))]
    assert reference("28-clip-grad-norm").clip_grad_norm(params, 1.0) == \
        torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(torch.ones(2))], 1.0)


@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0])
def test_rms_norm_is_torchs(scale: float) -> None:
    module = reference_module("29-rms-norm")
    from grader.model.gpt import GPTConfig

    config = GPTConfig(vocab_size=6, context_length=8, n_layer=1, n_head=2, n_embd=8)
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(2, 5, 8, generator=generator) * scale + scale
    gain = torch.randn(8, generator=generator)
    mine = module.RMSNorm(config)
    theirs = torch.nn.RMSNorm(8, eps=1e-5)
    with torch.no_grad():
        mine.weight.copy_(gain)
        theirs.weight.copy_(gain)
        assert torch.allclose(mine(x), theirs(x), rtol=1e-5, atol=1e-6)
        assert torch.allclose(mine(x), torch.nn.functional.rms_norm(x, (8,), gain, eps=1e-5),
                              rtol=1e-5, atol=1e-6)


def optimizer_run(steps: int, lr: float, weight_decay: float, seed: int,
                  dtype: torch.dtype = torch.float32) -> list[torch.Tensor]:
    """The weights and state after `steps` of torch.optim.AdamW's own step(), drawn as
    check_adamw.run_of_torch draws them."""
    generator = torch.Generator().manual_seed(seed)
    leaves = [torch.randn(s, generator=generator, dtype=dtype).requires_grad_(True)
              for s in check_adamw.shapes_of_a_small_gpt()]
    optimizer = torch.optim.AdamW(leaves, lr=lr, weight_decay=weight_decay)
    for _ in range(steps):
        for leaf in leaves:
            leaf.grad = torch.randn(leaf.shape, generator=generator, dtype=dtype)
        optimizer.step()
    state = [optimizer.state[leaf] for leaf in leaves]
    return ([leaf.detach() for leaf in leaves] + [s["exp_avg"] for s in state]
            + [s["exp_avg_sq"] for s in state])


@pytest.mark.parametrize("fallback", [False, True], ids=["function", "optimizer"])
def test_adamws_cases_are_torchs_optimizer_bit_for_bit(fallback: bool, monkeypatch) -> None:
    """The cases' runs call the function AdamW.step() calls, without the optimizer's
    dynamo import; a torch whose function differs falls back to the optimizer."""
    if fallback:
        def refuses(*args, **kwargs):
            raise TypeError("adamw() got an unexpected keyword argument")

        monkeypatch.setattr(check_adamw.torch_adamw, "adamw", refuses)
    for steps, lr, decay, seed, dtype in [(9, 1e-1, 0.1, 1, torch.float32),
                                          (3, 1e-2, 0.5, 2, torch.float64)]:
        weights, _, avgs, sqs, *_ = check_adamw.run_of_torch(steps, lr, decay, seed,
                                                             dtype=dtype)
        expected = optimizer_run(steps, lr, decay, seed, dtype)
        for got, want in zip([*weights, *avgs, *sqs], expected, strict=True):
            assert torch.equal(got, want)
