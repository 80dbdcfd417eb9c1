"""Checks for gpt: embeddings, blocks, final norm and head, token ids to logits.

The learner's GPT is loaded with the shipped checkpoint itself (the names of
grader/model/gpt.py's state dict), so on the shipped weights it must give the
shipped model's logits; then random GPTs of other sizes.
"""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.contracts.module_checks import drawn_contexts, module_tests, shipped_config
from grader.grading.subject import transformer
from grader.grading.subject.cases import SHIPPED, model_contexts
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import random_models
from grader.locale import marked
from grader.model.parts import weights
from grader.model.spec import ModelSpec

MISTAKES = mistakes_of(globals(), transformer.gpt)

SMALL = {"vocab_size": 6, "context_length": 8, "n_layer": 2, "n_head": 2, "n_embd": 8}


def cases() -> dict[str, tuple]:
    config = shipped_config()
    shipped = weights(SHIPPED)
    return {
        **{case: (config, shipped, ids) for case, ids in model_contexts().items()},
        "random-weights": (SMALL, weights(ModelSpec("random", SMALL, 7)),
                           torch.tensor([[0, 1, 2, 3, 4, 5, 0, 1], [5, 5, 4, 4, 3, 3, 2, 2]])),
    }


def draw_example(data: st.DataObject) -> tuple:
    """A random GPT, with random weights, on random token ids."""
    spec = data.draw(random_models(), label="model")
    config = spec.config
    return dict(config), weights(spec), drawn_contexts(data, config)


CONTRACT, test_shipped_model, test_random_models, test_the_same_output_twice = module_tests(
    cases, MISTAKES, draw_example, output=marked("the logits tensor"),
    shipped="Your GPT with the shipped weights, against the shipped model's logits",
    drawn="Small random GPTs, against the reference")
