"""Checks for transformer-block: pre-LayerNorm attention and MLP, each with its residual.

The learner's Block (with their CausalSelfAttention and MLP inside) is loaded
with known weights through the shipped checkpoint's names (ln_1, attn.qkv,
attn.proj, ln_2, mlp.fc, mlp.proj): the shipped model's own blocks on the
activations they see, then random weights and inputs.
"""

from __future__ import annotations

from functools import partial

import torch
from hypothesis import strategies as st

from grader.grading import transformer
from grader.grading.cases import SHIPPED, block_input, context_length, corpus_prefix, random_input
from grader.grading.contract import Contract
from grader.grading.judges import comparing, expect_activations, same_activations
from grader.grading.skeleton import Mistake
from grader.grading.strategies import random_models
from grader.model import artifacts
from grader.model.parts import weights
from grader.sandbox.protocol import ModelSpec

PRE_NORM = "x = x + self.attn(self.ln_1(x)), then x = x + self.mlp(self.ln_2(x))"

MISTAKES = [
    Mistake("normalise after each residual sum (post-norm) instead of before each sub-layer",
            "the sub-layers read a normalised copy, and x itself is never normalised "
            "in the block: " + PRE_NORM,
            partial(transformer.block, norm="post")),
    Mistake("leave out the attention's residual",
            "add the attention's output to x instead of replacing x: " + PRE_NORM,
            partial(transformer.block, residual=("mlp",))),
    Mistake("leave out the MLP's residual",
            "add the MLP's output to x instead of replacing x: " + PRE_NORM,
            partial(transformer.block, residual=("attn",))),
    Mistake("leave out both residuals", PRE_NORM, partial(transformer.block, residual=())),
    Mistake("use the two LayerNorms the other way round",
            "ln_1 goes before the attention and ln_2 before the MLP",
            partial(transformer.block, swap_norms=True)),
    Mistake("use GELU's tanh approximation",
            "the shipped model uses the exact GELU: F.gelu(x) or nn.GELU(), without "
            "approximate='tanh'",
            partial(transformer.block, activation="tanh")),
    Mistake("use ReLU instead of GELU", "the MLP's activation is F.gelu",
            partial(transformer.block, activation="relu")),
    # The attention pasted from multi-head-attention may be wrong in its own ways.
    Mistake("leave out the causal mask in the attention",
            "mask the scores of later positions with -inf before the softmax, as in "
            "multi-head-attention", partial(transformer.block, diagonal=None)),
    Mistake("divide the attention scores by head_size instead of its square root",
            "scale by 1 / sqrt(head_size), as in multi-head-attention",
            partial(transformer.block, scale="size")),
    Mistake("split the attention heads along the wrong axis",
            "view as (B, T, n_head, head_size), then .transpose(1, 2), as in "
            "multi-head-attention", partial(transformer.block, split="time")),
]

SMALL = {"vocab_size": 6, "context_length": 8, "n_layer": 1, "n_head": 2, "n_embd": 8}


def cases() -> dict[str, tuple]:
    config = artifacts.load_config().to_dict()
    return {
        "a-sentence": (config, weights(SHIPPED, "blocks.0"),
                       block_input("Once upon a time, there was a")),
        "last-block": (config, weights(SHIPPED, "blocks.2"), block_input("Tom and his dog ran", 2)),
        "one-token": (config, weights(SHIPPED, "blocks.1"), block_input("\n", 1)),
        "full-window": (config, weights(SHIPPED, "blocks.1"),
                        block_input(corpus_prefix(context_length()), 1)),
        "batch-of-two": (config, weights(SHIPPED, "blocks.0"),
                         torch.cat([block_input("The cat"), block_input("Tom ran")])),
        "random-weights": (SMALL, weights(ModelSpec("random", SMALL, 7), "blocks.0"),
                           random_input((2, 8, 8), seed=1)),
    }


def draw_example(data: st.DataObject) -> tuple:
    """A random GPT's first block, with random weights, on random activations."""
    spec = data.draw(random_models(), label="model")
    config = spec.config
    batch = data.draw(st.integers(1, 2), label="B")
    length = data.draw(st.integers(1, config["context_length"]), label="T")
    seed = data.draw(st.integers(0, 2**16), label="seed of x")
    return (dict(config), weights(spec, "blocks.0"),
            random_input((batch, length, config["n_embd"]), seed))


CONTRACT = Contract(
    problem="transformer-block", method="forward", arg_names=("config", "weights", "x"),
    cases=cases, mistakes=MISTAKES, matches=same_activations, same_as_golden=same_activations,
    judge=comparing(expect_activations, "the block's output"),
)

test_shipped_blocks, test_random_blocks = CONTRACT.tests(
    "The shipped model's blocks, on the activations they see",
    "Blocks of small random models, against the reference",
    draw_example)
