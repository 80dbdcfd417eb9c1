"""Checks for gpt: embeddings, blocks, final norm and head, token ids to logits.

The learner's GPT is loaded with the shipped checkpoint itself (the names of
grader/model/gpt.py's state dict), so on the shipped weights it must give the
shipped model's logits; then random GPTs of other sizes.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading import transformer
from grader.grading.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
from grader.grading.contract import Contract
from grader.grading.mistakes_data import mistakes_of
from grader.grading.module_checks import (
    judged_as_activations,
    repeatable,
    shipped_config,
)
from grader.grading.strategies import random_models, token_contexts
from grader.model.parts import weights
from grader.sandbox.protocol import ModelSpec

MISTAKES = mistakes_of(globals(), transformer.gpt)

SMALL = {"vocab_size": 6, "context_length": 8, "n_layer": 2, "n_head": 2, "n_embd": 8}


def cases() -> dict[str, tuple]:
    config = shipped_config()
    shipped = weights(SHIPPED)
    return {
        "a-sentence": (config, shipped, prompt_ids("Once upon a time, there was a")),
        "one-token": (config, shipped, prompt_ids("\n")),
        "full-window": (config, shipped, prompt_ids(corpus_prefix(context_length()))),
        "batch-of-two": (config, shipped,
                         torch.cat([prompt_ids("The cat"), prompt_ids("Tom ran")])),
        "random-weights": (SMALL, weights(ModelSpec("random", SMALL, 7)),
                           torch.tensor([[0, 1, 2, 3, 4, 5, 0, 1], [5, 5, 4, 4, 3, 3, 2, 2]])),
    }


def draw_example(data: st.DataObject) -> tuple:
    """A random GPT, with random weights, on random token ids."""
    spec = data.draw(random_models(), label="model")
    config = spec.config
    rows = [data.draw(token_contexts(config["vocab_size"], max_length=config["context_length"]),
                      label="context")]
    if data.draw(st.booleans(), label="a second row"):
        length = rows[0].shape[1]
        rows.append(data.draw(token_contexts(config["vocab_size"], length, length),
                              label="second row"))
    return dict(config), weights(spec), torch.cat(rows)


CONTRACT = Contract(cases=cases, mistakes=MISTAKES, **judged_as_activations("the logits tensor"))

test_shipped_model, test_random_models = CONTRACT.tests(
    "Your GPT with the shipped weights, against the shipped model's logits",
    "Small random GPTs, against the reference",
    draw_example)

test_the_same_output_twice = repeatable(CONTRACT)
