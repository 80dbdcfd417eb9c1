"""Run a statement's examples yourself, in a Python session or a notebook.

Started in your kata folder::

    >>> from grader.play import *
    >>> globals().update(examples("top-k"))

The first line gives the shipped model (`model`), its vocabulary (`int_to_char`,
also called `vocab`), `context_length`, `encode(text)` (a (1, T) tensor of ids),
`decode(ids)`, `torch` and `solution_of`. The second gives `Solution` (yours,
from problems/NN-slug/solution.py, read afresh at each call) and the inputs the
problem's statement uses in its examples, under the names it uses (`prompt`,
`probs`, `logits`, ...). After these two lines, every `>>>` line of the
statement's examples runs as written.

This loads the model and torch, but neither pytest nor the grader's sandbox.
"""

from __future__ import annotations

from typing import Any

import torch

from grader.model import artifacts
from grader.model.gpt import GPT
from grader.registry import find
from grader.reuse import solution_of

__all__ = ["context_length", "decode", "encode", "examples", "int_to_char", "model",
           "solution_of", "torch", "vocab"]

# A copy of its own, without gradients: outputs print as plain tensors, as in the
# statements, and nothing done to it here reaches the grader's copy.
model: GPT = artifacts.load_model().requires_grad_(False)
int_to_char: dict[int, str] = artifacts.shipped_vocab()
vocab = int_to_char
context_length: int = model.config.context_length

# The texts the statements' examples start from.
ONCE = "Once upon a time,"
THERE_WAS_A = "Once upon a time, there was a "
STORY = "Once upon a time, there was a little girl named Lily. She loved to play"
CAT = "the cat saw the"


def encode(text: str) -> torch.Tensor:
    """Text to a (1, T) LongTensor of the shipped vocabulary's ids."""
    return artifacts.encode(text, int_to_char)


def decode(ids: Any) -> str:
    """Ids (a list, a (T,) or a (1, T) tensor) back to text."""
    if isinstance(ids, torch.Tensor):
        ids = ids.reshape(-1).tolist()
    return "".join(int_to_char[int(i)] for i in ids)


def next_logits(text: str) -> torch.Tensor:
    """The shipped model's logits for the character after `text`, shape (1, vocab_size)."""
    return model(encode(text))[:, -1, :]


def _inputs(slug: str) -> dict[str, Any]:
    """The named inputs of each statement's examples, built when asked for."""
    if slug == "crop-context":
        return {"story": encode(STORY)}
    if slug == "sample":
        return {"probs": torch.softmax(next_logits(THERE_WAS_A), dim=-1)}
    if slug in ("temperature", "top-k", "top-p", "top-k-top-p"):
        return {"logits": next_logits(THERE_WAS_A)}
    if slug == "no-repeat-ngram":
        return {"logits": next_logits(CAT)[0], "ids": encode(CAT)[0].tolist()}
    if slug == "stream":
        return {"context": encode(ONCE)}
    if slug in ("generate", "greedy", "eos-stop", "kv-cache", "sampler"):
        return {"prompt": encode(ONCE)}
    return {}


def examples(problem: str | int, solution: type | None = None) -> dict[str, Any]:
    """The names a problem's statement uses in its examples.

    problem: slug, number or folder, as on the command line ("top-k", 9, "09-top-k").
    solution: the class to call `Solution`; by default yours, from your problems/.
    """
    found = find(str(problem))
    if solution is None:
        solution = solution_of(found.folder, finished=False)
    names: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "examples"}
    return {**names, "Solution": solution, **_inputs(found.slug)}
