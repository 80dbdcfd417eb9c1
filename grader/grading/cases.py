"""Inputs built from the shipped model, shared by the checks and the statements."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import torch

from grader.model import artifacts
from grader.sandbox.protocol import ModelSpec

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


def generation_args(fixed: dict[str, tuple[str, int]]) -> dict[str, tuple]:
    """(prompt, new_chars) cases as generate()-style arguments on the shipped model."""
    from grader.model import artifacts

    return {
        case_id: (SHIPPED, new_chars, prompt_ids(prompt), context_length(),
                  artifacts.shipped_vocab())
        for case_id, (prompt, new_chars) in fixed.items()
    }


def judge_reset_sampling(args: tuple) -> Callable[[Any, str], None]:
    """A judge for Track 1's sampling (seed 0, state restored every step), fair at ties."""
    from grader.grading.judges import judge_sampled_text
    from grader.grading.skeleton import materialise

    model, _new_chars, context, n, int_to_char = (materialise(a) for a in args[:5])

    def judge(got: Any, expected: str) -> None:
        judge_sampled_text(
            got, expected,
            step_probs=lambda window: next_token_probs(model, window),
            prompt_ids=context[0].tolist(),
            int_to_char=int_to_char,
            state_for_step=lambda step: seed_state(0),
            window=lambda ids: ids[-n:],
        )

    return judge
