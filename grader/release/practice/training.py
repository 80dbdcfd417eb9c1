"""The GPTs the training problems' drivers train, built from exported programs.

The instructor's grader builds a new GPT of a given config, its weights drawn from
a seed, for every training call. This copy holds no GPT class (it is problem 23's
answer): the release exported each GPT the practice cases train, in training mode,
and this module builds a fresh one from its program, with the same parameters by
the same names, so that a training step changes it as it changes the grader's.
"""

from __future__ import annotations

import json
from functools import cache

import torch
from gpt_kata_practice.codec import load_program, stored

from grader.model.config import GPTConfig


@cache
def loaded(name: str) -> torch.nn.Module:
    """A program, loaded once: each run trains a copy of it."""
    return load_program(name)


def trainable_model(config: dict[str, int], seed: int) -> torch.nn.Module:
    """A new GPT of `config` with the weights drawn from `seed`, in training mode."""
    import copy

    key = json.dumps({"config": config, "seed": seed}, sort_keys=True)
    # Each trainable GPT's description, as a key, and the name of its program.
    name = stored()["trainable"].get(key)
    if name is None:
        raise LookupError(f"this copy holds no trained GPT of {key}: only the practice "
                          "cases' models")
    fresh = copy.deepcopy(loaded(name))
    # As the kata's GPT carries them: code that reads model.config runs here too.
    fresh.config = GPTConfig(**config)
    fresh.context_length = fresh.config.context_length
    # This GPT has no dropout, so the modes compute alike: train() and eval() set the
    # flag the loop's driver reads (model.training), as on the grader's GPT.
    return fresh.train()
