"""Inputs built from the shipped model, shared by the checks and the statements."""

from __future__ import annotations

from functools import cache

import torch

from grader import artifacts
from grader.protocol import ModelSpec

SHIPPED = ModelSpec("shipped")


@cache
def context_length() -> int:
    return artifacts.load_config().context_length


@cache
def corpus_prefix(n: int) -> str:
    """The corpus' first n characters: a prompt the model has seen the like of."""
    text = artifacts.CORPUS.read_text(encoding="utf-8")
    return text[:n]


def prompt_ids(prompt: str) -> torch.Tensor:
    return artifacts.encode(prompt, artifacts.shipped_vocab())


@torch.no_grad()
def next_token_probs(model: torch.nn.Module, window: list[int]) -> torch.Tensor:
    """The reference distribution for the next token, in float64 (vocab_size,)."""
    logits = model(torch.tensor([window], dtype=torch.long))[0, -1]
    return torch.softmax(logits.double(), dim=-1)


def seed_state(seed: int = 0) -> torch.Tensor:
    return torch.Generator().manual_seed(seed).get_state()
