"""Checks for multi-head-attention: the attention layer of a block, as a module.

The learner's CausalSelfAttention is loaded with known weights through the
shipped checkpoint's names (qkv, proj): the shipped model's own attention
layers on the activations they see, then random weights and inputs. Its output
must be the shipped layer's.
"""

from __future__ import annotations

from functools import partial

import torch
from hypothesis import strategies as st

from grader.grading import transformer
from grader.grading.cases import (
    SHIPPED,
    attention_input,
    context_length,
    corpus_prefix,
    random_input,
)
from grader.grading.contract import Contract
from grader.grading.judges import comparing, expect_activations, same_activations
from grader.grading.skeleton import Mistake
from grader.grading.strategies import random_models
from grader.model import artifacts
from grader.model.parts import weights
from grader.sandbox.protocol import ModelSpec

MASK = "query t may see keys 0 to t: mask the scores where torch.tril(torch.ones(T, T)) is 0"
SPLIT = ("view (B, T, C) as (B, T, n_head, head_size), then .transpose(1, 2): head h owns "
         "channels h*head_size to (h+1)*head_size of every position")

MISTAKES = [
    Mistake("leave out the causal mask",
            "set the scores of later positions to -inf before the softmax; " + MASK,
            partial(transformer.attention, diagonal=None)),
    Mistake("put the mask's diagonal one off",
            "each position sees itself too, and nothing after it; " + MASK,
            partial(transformer.attention, diagonal=1),
            partial(transformer.attention, diagonal=-1)),
    Mistake("divide the scores by head_size instead of its square root",
            "scale by 1 / sqrt(head_size), the size of one head, not of n_embd",
            partial(transformer.attention, scale="size")),
    Mistake("divide the scores by the square root of n_embd instead of head_size",
            "each head's dot products have head_size terms: scale by 1 / sqrt(head_size)",
            partial(transformer.attention, scale="embd")),
    Mistake("leave the scores unscaled",
            "divide q @ k.transpose(-2, -1) by sqrt(head_size) before the softmax",
            partial(transformer.attention, scale="none")),
    Mistake("take the softmax over the wrong dimension",
            "the scores are (B, n_head, T, T) and each query's row becomes its weights: "
            "softmax over the last dimension, dim=-1",
            partial(transformer.attention, softmax_dim=-2),
            partial(transformer.attention, softmax_dim=1)),
    Mistake("split the heads along the wrong axis", SPLIT,
            partial(transformer.attention, split="time"),
            partial(transformer.attention, split="time", merge="time")),
    Mistake("join the heads without transposing them back",
            "y is (B, n_head, T, head_size): .transpose(1, 2) before .view(B, T, C)",
            partial(transformer.attention, merge="time")),
    Mistake("leave out the output projection",
            "the heads' outputs side by side go through self.proj",
            partial(transformer.attention, project=False)),
    Mistake("mask after the softmax",
            "mask the scores with -inf before the softmax, so that each row of weights "
            "still adds up to 1",
            partial(transformer.attention, mask_after_softmax=True)),
]

SMALL = {"vocab_size": 6, "context_length": 8, "n_layer": 1, "n_head": 2, "n_embd": 8}


def cases() -> dict[str, tuple]:
    config = artifacts.load_config().to_dict()
    return {
        "a-sentence": (config, weights(SHIPPED, "blocks.0.attn"),
                       attention_input("Once upon a time, there was a")),
        "last-layer": (config, weights(SHIPPED, "blocks.2.attn"),
                       attention_input("Tom and his dog ran", 2)),
        "one-token": (config, weights(SHIPPED, "blocks.0.attn"), attention_input("\n")),
        "full-window": (config, weights(SHIPPED, "blocks.1.attn"),
                        attention_input(corpus_prefix(context_length()), 1)),
        "batch-of-two": (config, weights(SHIPPED, "blocks.0.attn"),
                         torch.cat([attention_input("The cat"), attention_input("Tom ran")])),
        "random-weights": (SMALL, weights(ModelSpec("random", SMALL, 7), "blocks.0.attn"),
                           random_input((2, 8, 8), seed=1)),
    }


def draw_example(data: st.DataObject) -> tuple:
    """A random GPT's attention layer, with random weights, on random activations."""
    spec = data.draw(random_models(), label="model")
    config = spec.config
    batch = data.draw(st.integers(1, 2), label="B")
    length = data.draw(st.integers(1, config["context_length"]), label="T")
    seed = data.draw(st.integers(0, 2**16), label="seed of x")
    return (dict(config), weights(spec, "blocks.0.attn"),
            random_input((batch, length, config["n_embd"]), seed))


CONTRACT = Contract(
    problem="multi-head-attention", method="forward", arg_names=("config", "weights", "x"),
    cases=cases, mistakes=MISTAKES,
    matches=same_activations, same_as_golden=same_activations,
    judge=comparing(expect_activations, "the attention layer's output"),
)

test_shipped_layers, test_random_layers = CONTRACT.tests(
    "The shipped model's attention layers, on the activations they see",
    "Attention layers of small random models, against the reference",
    draw_example)
