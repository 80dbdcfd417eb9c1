"""Inputs built from the shipped model, shared by the checks' cases and the statements.

A check module's *cases* are named sets of arguments (case id -> arguments);
the reference's outputs for them are the goldens. The generation problems
share one table of prompts, `generation_prompts`.
"""

from __future__ import annotations

from functools import cache

import torch

from grader.model import artifacts
from grader.model.spec import ModelSpec

SHIPPED = ModelSpec("shipped")


@cache
def context_length() -> int:
    return artifacts.load_config().context_length


@cache
def corpus_prefix(n: int) -> str:
    """The corpus' first n characters: a prompt the model has seen the like of."""
    text = artifacts.corpus_text()
    return text[:n]


def prompt_ids(prompt: str) -> torch.Tensor:
    return artifacts.encode(prompt, artifacts.shipped_vocab())


def model_contexts() -> dict[str, torch.Tensor]:
    """The contexts a whole model's fixed cases run on, by case id (gpt, modern-gpt):
    a sentence, one token, a full window and a batch of two."""
    return {
        "a-sentence": prompt_ids("Once upon a time, there was a"),
        "one-token": prompt_ids("\n"),
        "full-window": prompt_ids(corpus_prefix(context_length())),
        "batch-of-two": torch.cat([prompt_ids("The cat"), prompt_ids("Tom ran")]),
    }


def corpus_ids(n: int) -> torch.Tensor:
    """The corpus' first n characters as a (n,) LongTensor: data to cut windows from."""
    return prompt_ids(corpus_prefix(n))[0]


@torch.no_grad()
def shipped_logits(*prompts: str) -> torch.Tensor:
    """The shipped model's next-token logits after each prompt, one row each.

    The prompts run as one batch, so they must have the same length; a prompt
    longer than the window is cropped to it, as generation would.
    """
    ids = torch.cat([prompt_ids(p)[:, -context_length():] for p in prompts])
    return artifacts.shipped_model()(ids)[:, -1, :]


@torch.no_grad()
def next_token_probs(model: torch.nn.Module, window: list[int]) -> torch.Tensor:
    """The reference distribution for the next token, in float64 (vocab_size,)."""
    logits = model(torch.tensor([window], dtype=torch.long))[0, -1]
    return torch.softmax(logits.double(), dim=-1)


@torch.no_grad()
def block_input(prompt: str, layer: int = 0) -> torch.Tensor:
    """What the shipped model's block `layer` receives for `prompt`: (1, T, n_embd).

    Real activations, so that the checks of the model's parts run on the
    inputs those parts see in the shipped model.
    """
    model = artifacts.shipped_model()
    ids = prompt_ids(prompt)[:, -context_length():]
    x = model.token_embedding(ids) + model.position_embedding(torch.arange(ids.shape[1]))
    for block in model.blocks[:layer]:
        x, _ = block(x)
    return x


@torch.no_grad()
def attention_input(prompt: str, layer: int = 0) -> torch.Tensor:
    """What the attention of the shipped model's block `layer` receives: its
    first LayerNorm of the block's input, (1, T, n_embd)."""
    return artifacts.shipped_model().blocks[layer].ln_1(block_input(prompt, layer))


def random_input(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Activations of a given shape drawn from N(0, 1) with a seeded generator."""
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def seed_state(seed: int = 0) -> torch.Tensor:
    return torch.Generator().manual_seed(seed).get_state()


def generation_prompts() -> dict[str, tuple[str, int]]:
    """Case id -> (prompt, new_chars) on the shipped model, for generate()-style methods.

    Short and long prompts, a window filled exactly, no and one new character,
    and enough new characters to slide the window many times.
    """
    n = context_length()
    return {
        "short-context": ("Tom", 40),
        "exact-context": (corpus_prefix(n), 30),
        "long-context": (corpus_prefix(2 * n + 7), 30),
        "zero-chars": ("The cat", 0),
        "one-char": ("Once upon a time", 1),
        "crop-many-times": ("\n", 2 * n + 4),
    }


def other_window_cases() -> dict[str, tuple]:
    """Generations that no check judges, on a small random GPT whose window (4) is not
    the shipped one's, from a prompt longer than it: their answers tell apart mistakes
    of the window that every fixed case, on the shipped model, answers alike.
    - Cropping to 48 whatever context_length says raises here; cropping one token
      too few does not (both raise alike on the smallest drawn model, a window of 1).
    - For one new character, cropping once before the loop is right, and cropping one
      token too many raises (with more, both raise at the window's fifth token)."""
    config = {"vocab_size": 8, "context_length": 4, "n_layer": 1, "n_head": 2, "n_embd": 8}
    vocab = {i: "abcdefgh"[i] for i in range(8)}
    model, context = ModelSpec("random", config, 0), torch.tensor([[3, 1, 4, 1, 5, 2]])
    return {"other-window": (model, 6, context, 4, vocab),
            "other-window-one-char": (model, 1, context, 4, vocab)}


def generation_cases(prompts: dict[str, tuple[str, int]] | None = None) -> dict[str, tuple]:
    """(prompt, new_chars) cases, by default `generation_prompts()`, as the arguments
    of a generate()-style call: (model, new_chars, context, context_length, int_to_char)
    on the shipped model."""
    prompts = generation_prompts() if prompts is None else prompts
    return {
        case_id: (SHIPPED, new_chars, prompt_ids(prompt), context_length(),
                  artifacts.shipped_vocab())
        for case_id, (prompt, new_chars) in prompts.items()
    }
