"""How a failing call's inputs read in Track 3's reports: by name and shape.

A module problem's inputs are (config, weights, x or context); weights are a
description of known weights, and a text may be the whole corpus.
"""

from __future__ import annotations

import torch

from grader.grading.subject.inputs import describe_inputs
from grader.model import artifacts
from grader.model.parts import weights
from grader.model.spec import ModelSpec


def test_a_module_case_shows_its_weights_and_activations_by_name_and_shape() -> None:
    config = artifacts.load_config().to_dict()
    lines = describe_inputs({"config": config,
                             "weights": weights(ModelSpec("shipped"), "blocks.0.attn", 2),
                             "x": torch.zeros(1, 29, 64)})
    assert lines[1] == ("weights: attention head number 2 of blocks.0.attn of the shipped "
                        "model (its rows of qkv as query, key and value)")
    assert lines[2] == "x: float32 tensor of shape (1, 29, 64), from 0 to 0"
    assert "None" not in "\n".join(lines) and "'head'" not in "\n".join(lines)


def test_the_gpt_s_context_is_spelled_and_its_weights_are_the_whole_model() -> None:
    vocab = artifacts.shipped_vocab()
    ids = {c: i for i, c in vocab.items()}
    lines = describe_inputs({"weights": weights(ModelSpec("shipped")),
                             "context": torch.tensor([[ids["T"], ids["o"], ids["m"]]])})
    assert lines == ["weights: all the weights of the shipped model",
                     "context: int64 tensor of shape (1, 3), the text 'Tom' (3 tokens)"]


def test_the_corpus_is_counted_in_characters() -> None:
    corpus = artifacts.CORPUS.read_text(encoding="utf-8")
    assert len(corpus) != len(repr(corpus))  # what was counted before: its repr
    [line] = describe_inputs({"corpus": corpus})
    assert line == f"corpus: the shipped corpus, data/corpus.txt ({len(corpus):,} characters)"
    [line] = describe_inputs({"corpus": "ab\n" * 100})
    assert line.endswith("... (300 characters)")


def test_a_module_problem_binds_its_inputs_under_the_contract_s_names() -> None:
    """Not `inputs: (tensor(...),)`, the driver's *inputs, but the statement's name."""
    from types import SimpleNamespace

    from grader.checks.gpt.check_gpt import CONTRACT
    from grader.model.gpt import GPT
    from grader.model.parts import ModuleDriver

    kata = SimpleNamespace(reference=ModuleDriver(GPT))
    assert CONTRACT.bind(kata, ("c", "w", "ids")) == {"config": "c", "weights": "w",
                                                      "context": "ids"}


def test_a_cache_and_a_state_dict_are_described_tensor_by_tensor() -> None:
    """A KV cache (a tuple of tensors) and weights given as tensors by name read as
    their tensors' shapes and ranges, not as pages of printed numbers."""
    past = (torch.full((1, 2, 28, 16), 0.5), torch.full((1, 2, 28, 16), -1.0))
    weights_by_name = {"tensors": {f"layer{i}.weight": torch.ones(64, 64) for i in range(10)}}
    lines = describe_inputs({"weights": weights_by_name, "past": past})
    assert lines[1] == ("past: (float32 tensor of shape (1, 2, 28, 16), from 0.5 to 0.5; "
                        "float32 tensor of shape (1, 2, 28, 16), from -1 to -1)")
    assert lines[0].startswith("weights: {'tensors': {'layer0.weight': float32 tensor of "
                               "shape (64, 64), from 1 to 1; ")
    assert lines[0].endswith("; and 2 more}}")
    assert "tensor([" not in "\n".join(lines)
