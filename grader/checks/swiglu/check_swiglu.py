"""Checks for problem 33, swiglu: the gated feed-forward layer of Llama, as an nn.Module.

The learner's SwiGLU is built from a Llama-style config (grader/model/llama.py) and its
three projections are loaded by name (gate_proj, up_proj, down_proj, no biases; weights
given as tensors, since the shipped GPT has no gated layer). The inputs are what the
shipped model's MLPs read (their LayerNorm's output), then random inputs of other sizes;
the weights are drawn at the scale of a linear layer's own initialisation, so that the
gate's pre-activations are of order one, where silu, GELU, ReLU and sigmoid differ most.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.module_checks import activation_tests
from grader.grading.subject.cases import block_input, random_input
from grader.grading.subject.mistakes_data import mistakes_of
from grader.locale import marked
from grader.model import artifacts
from grader.model.llama import LlamaConfig
from grader.model.parts import given, state_dict

ACTIVATIONS = {"silu": F.silu, "gelu": F.gelu, "relu": F.relu, "sigmoid": torch.sigmoid,
               "tanh-gelu": partial(F.gelu, approximate="tanh"),
               "identity": lambda z: z}


def swiglu(config: dict[str, Any], weights: dict[str, Any], x: torch.Tensor, *,
           activation: str = "silu", on: str = "gate", combine: str = "product",
           down: bool = True, after: bool = False) -> torch.Tensor:
    """SwiGLU, or one of its known mistakes: another `activation` on the gate; the
    activation `on` the up branch, on both, or on the product ("after"); the branches
    added instead of multiplied, or one of them left out (`combine`); no down_proj;
    an activation `after` down_proj too."""
    w = state_dict(weights)
    act = ACTIVATIONS[activation]
    gate, up = x @ w["gate_proj.weight"].T, x @ w["up_proj.weight"].T
    if on == "gate":
        gate = act(gate)
    elif on == "up":
        up = act(up)
    elif on == "both":
        gate, up = act(gate), act(up)
    hidden = {"product": lambda: gate * up, "sum": lambda: gate + up,
              "gate-only": lambda: gate, "up-only": lambda: up}[combine]()
    if on == "product":
        hidden = act(gate * up)
    if not down:
        return hidden
    y = hidden @ w["down_proj.weight"].T
    return F.silu(y) if after else y


MISTAKES = mistakes_of(globals(), swiglu)


def random_weights(n_embd: int, n_hidden: int, seed: int, scale: float = 1.0
                   ) -> dict[str, Any]:
    """Three projections drawn from N(0, scale / fan_in), like a linear layer's own
    initialisation: the gate's pre-activations are then of order one."""
    generator = torch.Generator().manual_seed(seed)

    def draw(rows: int, cols: int) -> torch.Tensor:
        return torch.randn(rows, cols, generator=generator) * scale / cols ** 0.5

    return given({"gate_proj.weight": draw(n_hidden, n_embd),
                  "up_proj.weight": draw(n_hidden, n_embd),
                  "down_proj.weight": draw(n_embd, n_hidden)})


@torch.no_grad()
def mlp_input(prompt: str, layer: int = 0) -> torch.Tensor:
    """What the MLP of the shipped model's block `layer` reads for `prompt`: its second
    LayerNorm's output, (1, T, n_embd)."""
    block = artifacts.shipped_model().blocks[layer]
    x = block_input(prompt, layer)
    attended, _ = block.attn(block.ln_1(x))
    return block.ln_2(x + attended)


def llama_config(**changed: Any) -> dict[str, Any]:
    """The shipped size of Llama-style config (n_hidden 176 for n_embd 64), as a dict."""
    vocab_size = artifacts.load_config().vocab_size
    return LlamaConfig(vocab_size=vocab_size, **changed).to_dict()


def small_config(n_embd: int, n_hidden: int) -> dict[str, Any]:
    return LlamaConfig(vocab_size=6, context_length=8, n_layer=1, n_head=1, n_kv_head=1,
                       n_embd=n_embd, n_hidden=n_hidden).to_dict()


def cases() -> dict[str, tuple]:
    config = llama_config()
    return {
        "a-sentence": (config, random_weights(64, 176, 1),
                       mlp_input("Once upon a time, there was a")),
        "a-later-block": (config, random_weights(64, 176, 2), mlp_input("Tom and his dog ran", 2)),
        "one-token": (config, random_weights(64, 176, 3), mlp_input("\n", 1)),
        "batch-of-two": (config, random_weights(64, 176, 4),
                         torch.cat([mlp_input("The cat"), mlp_input("Tom ran")])),
        "large-weights": (config, random_weights(64, 176, 5, scale=4.0), mlp_input("The cat")),
        "a-small-layer": (small_config(4, 12), random_weights(4, 12, 6),
                          random_input((2, 3, 4), seed=7)),
        "a-narrow-hidden-layer": (small_config(8, 3), random_weights(8, 3, 8),
                                  random_input((1, 5, 8), seed=9)),
    }


def draw_example(data: st.DataObject) -> tuple:
    n_embd = data.draw(st.sampled_from([1, 2, 4, 8, 16]), label="n_embd")
    n_hidden = data.draw(st.integers(1, 48), label="n_hidden")
    batch = data.draw(st.integers(1, 2), label="B")
    length = data.draw(st.integers(1, 8), label="T")
    scale = data.draw(st.sampled_from([0.5, 1.0, 4.0]), label="scale of the weights")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    return (small_config(n_embd, n_hidden), random_weights(n_embd, n_hidden, seed, scale),
            random_input((batch, length, n_embd), seed + 1))


CONTRACT, test_shipped_inputs, test_random_layers = activation_tests(
    cases, MISTAKES, draw_example, output=marked("the layer's output"),
    shipped="SwiGLU on what the shipped model's MLPs read, with weights at a linear layer's "
            "scale and four times it, and on small layers",
    drawn="SwiGLU layers of random widths, weights and inputs, against the reference")
