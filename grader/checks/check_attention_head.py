"""Checks for attention-head: one head of causal self-attention, as a module.

The learner's Head is built from a config, loaded with known weights through
the names the statement fixes (query, key, value; grader/model/parts.py) and
called on activations: one head's slice of the shipped model's attention on
the inputs that attention really sees, and random weights and inputs.
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

MISTAKES = [
    Mistake("leave out the causal mask",
            "set the scores of later positions to -inf before the softmax; " + MASK,
            partial(transformer.head, diagonal=None)),
    Mistake("put the mask's diagonal one off",
            "each position sees itself too, and nothing after it; " + MASK,
            partial(transformer.head, diagonal=1), partial(transformer.head, diagonal=-1)),
    Mistake("divide the scores by head_size instead of its square root",
            "scale by 1 / sqrt(head_size), so the scores' spread does not depend on it",
            partial(transformer.head, scale="size")),
    Mistake("divide the scores by the square root of n_embd instead of head_size",
            "the dot products have head_size terms: scale by 1 / sqrt(head_size), where "
            "head_size = k.shape[-1], not x.shape[-1]",
            partial(transformer.head, scale="embd")),
    Mistake("leave the scores unscaled",
            "divide q @ k.transpose(-2, -1) by sqrt(head_size) before the softmax",
            partial(transformer.head, scale="none")),
    Mistake("take the softmax over the queries instead of the keys",
            "each query's row of scores becomes its weights: softmax over the last "
            "dimension, dim=-1",
            partial(transformer.head, softmax_dim=-2), partial(transformer.head, softmax_dim=1)),
    Mistake("mask after the softmax",
            "mask the scores with -inf before the softmax, so that each row of weights "
            "still adds up to 1",
            partial(transformer.head, mask_after_softmax=True)),
]

# A config small enough to read, for the fixed case with random weights.
SMALL = {"vocab_size": 6, "context_length": 8, "n_layer": 1, "n_head": 2, "n_embd": 8}


def shipped_config() -> dict[str, int]:
    return artifacts.load_config().to_dict()


def cases() -> dict[str, tuple]:
    config = shipped_config()
    return {
        "a-sentence": (config, weights(SHIPPED, "blocks.0.attn", 0),
                       attention_input("Once upon a time, there was a")),
        "last-layer-last-head": (config, weights(SHIPPED, "blocks.2.attn", 3),
                                 attention_input("Tom and his dog ran", 2)),
        "one-token": (config, weights(SHIPPED, "blocks.0.attn", 1), attention_input("\n")),
        "full-window": (config, weights(SHIPPED, "blocks.1.attn", 2),
                        attention_input(corpus_prefix(context_length()), 1)),
        "batch-of-two": (config, weights(SHIPPED, "blocks.0.attn", 0),
                         torch.cat([attention_input("The cat"), attention_input("Tom ran")])),
        "random-weights": (SMALL, weights(ModelSpec("random", SMALL, 7), "blocks.0.attn", 1),
                           random_input((2, 8, 8), seed=1)),
    }


def draw_example(data: st.DataObject) -> tuple:
    """A head of a random GPT's attention, with random weights, on random activations."""
    spec = data.draw(random_models(), label="model")
    config = spec.config
    head = data.draw(st.integers(0, config["n_head"] - 1), label="head")
    batch = data.draw(st.integers(1, 2), label="B")
    length = data.draw(st.integers(1, config["context_length"]), label="T")
    seed = data.draw(st.integers(0, 2**16), label="seed of x")
    return (dict(config), weights(spec, "blocks.0.attn", head),
            random_input((batch, length, config["n_embd"]), seed))


CONTRACT = Contract(
    problem="attention-head", method="forward", arg_names=("config", "weights", "x"),
    cases=cases, mistakes=MISTAKES, matches=same_activations, same_as_golden=same_activations,
    judge=comparing(expect_activations, "the head's output"),
)

test_shipped_heads, test_random_heads = CONTRACT.tests(
    "One head of the shipped model's attention, on the activations it sees",
    "Heads of small random models, against the reference",
    draw_example)
