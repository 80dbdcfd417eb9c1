"""Checks for problem 29, rms-norm: RMSNorm with a learned gain, as an nn.Module.

The learner's RMSNorm is built from a config and its one parameter, `weight`, is
loaded by name (grader/model/parts.py, weights given as they are: the shipped GPT
has LayerNorms, not RMSNorms). The gains are the shipped model's LayerNorm
weights on the activations those LayerNorms see, then random gains and inputs,
small ones among them, where the eps shows.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.module_checks import activation_tests, shipped_config
from grader.grading.subject.cases import block_input, random_input
from grader.grading.subject.mistakes_data import mistakes_of
from grader.locale import marked
from grader.model import artifacts
from grader.model.parts import given, state_dict

EPS = 1e-5


def rms_norm(config: dict[str, int], weights: dict[str, Any], x: torch.Tensor, *,
             eps: float = EPS, centred: bool = False, eps_outside: bool = False,
             squares: str = "mean", gain: bool = True, dim: int = -1,
             root: bool = True) -> torch.Tensor:
    """RMSNorm, or one of its known mistakes: another `eps`, the mean taken away
    first (`centred`, LayerNorm without its bias), eps added after the root,
    the squares summed, the gain left out, the mean taken over another `dim`, or
    `root=False`, x divided by the mean of the squares itself (its square, not its
    root: the mean square, not the root mean square)."""
    weight = state_dict(weights)["weight"]
    if centred:
        x = x - x.mean(dim=-1, keepdim=True)
    reduced = x.pow(2).sum(dim, keepdim=True) if squares == "sum" else \
        x.pow(2).mean(dim, keepdim=True)
    if not root:
        y = x / (reduced + eps)
    elif eps_outside:
        y = x / (reduced.sqrt() + eps)
    else:
        y = x * torch.rsqrt(reduced + eps)
    return y * weight if gain else y


def torch_default_eps(config: dict[str, int], weights: dict[str, Any],
                      x: torch.Tensor) -> torch.Tensor:
    """nn.RMSNorm(n_embd) or F.rms_norm without eps: torch's default, the dtype's
    machine epsilon."""
    if not hasattr(F, "rms_norm"):  # torch before 2.4 (Intel Macs): the same, by hand
        return rms_norm(config, weights, x, eps=torch.finfo(x.dtype).eps)
    return F.rms_norm(x, (x.shape[-1],), state_dict(weights)["weight"].to(x.dtype))


MISTAKES = mistakes_of(globals(), rms_norm)


def shipped_gain(layer: int, which: str) -> dict[str, Any]:
    """The weight of one of the shipped model's LayerNorms, as an RMSNorm's gain."""
    state = artifacts.shipped_model().state_dict()
    return given({"weight": state[f"blocks.{layer}.{which}.weight"].detach().clone()})


def random_gain(n_embd: int, seed: int) -> dict[str, Any]:
    return given({"weight": 1 + 0.5 * random_input((n_embd,), seed)})


def cases() -> dict[str, tuple]:
    config = shipped_config()
    n = config["n_embd"]
    small = {"vocab_size": 6, "context_length": 8, "n_layer": 1, "n_head": 2, "n_embd": 8}
    return {
        "a-sentence": (config, shipped_gain(0, "ln_1"),
                       block_input("Once upon a time, there was a")),
        "a-later-block": (config, shipped_gain(2, "ln_2"), block_input("Tom and his dog ran", 2)),
        "one-token": (config, shipped_gain(1, "ln_1"), block_input("\n", 1)),
        "batch-of-two": (config, shipped_gain(0, "ln_2"),
                         torch.cat([block_input("The cat"), block_input("Tom ran")])),
        "random-gain": (small, random_gain(8, 1), random_input((2, 5, 8), seed=2)),
        "small-activations": (small, random_gain(8, 3), random_input((1, 4, 8), seed=4) * 1e-3),
        "an-offset-input": (config, random_gain(n, 5), random_input((1, 3, n), seed=6) + 2.0),
    }


def draw_example(data: st.DataObject) -> tuple:
    n_embd = data.draw(st.sampled_from([1, 2, 4, 8, 16]), label="n_embd")
    config = {"vocab_size": 6, "context_length": 8, "n_layer": 1, "n_head": 1,
              "n_embd": n_embd}
    batch = data.draw(st.integers(1, 2), label="B")
    length = data.draw(st.integers(1, 8), label="T")
    scale = data.draw(st.sampled_from([1e-3, 1.0, 30.0]), label="scale of x")
    shift = data.draw(st.sampled_from([0.0, 1.0]), label="shift of x")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    x = random_input((batch, length, n_embd), seed) * scale + shift * scale
    return config, random_gain(n_embd, seed + 1), x


CONTRACT, test_shipped_gains, test_random_rms_norms = activation_tests(
    cases, MISTAKES, draw_example, output=marked("the normalised output"),
    shipped="RMSNorm with the shipped LayerNorms' gains on the activations they see, random "
            "gains, small and offset inputs",
    drawn="RMSNorms of random widths, gains and inputs, against the reference")
