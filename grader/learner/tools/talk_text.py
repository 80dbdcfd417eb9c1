"""What `gpt-kata talk` does the same in the kata and in a learners' copy: its options
checked, its prompt read (as trace reads one), a fresh seed, and a text cut into
sentences."""

from __future__ import annotations

import argparse
import math
from typing import Any

from grader.learner.errors import UsageError
from grader.locale import tr

# The options that make talk sample as asked, with seed 0 unless --seed says otherwise.
SAMPLING_OPTIONS = ("temperature", "top_k", "top_p", "no_repeat_ngram", "seed")


def check_options(args: argparse.Namespace) -> None:
    if args.chars < 0:
        raise UsageError(tr("--chars must be 0 or more"))
    # nan passes `< 0`, and inf divides every logit down to nothing: both are refused.
    if args.temperature is not None and not 0 <= args.temperature < math.inf:
        raise UsageError(tr("--temperature must be a finite number, 0 (greedy) or more"))
    if args.top_k is not None and args.top_k < 0:
        raise UsageError(tr("--top-k must be 0 (off) or more"))
    if args.top_p is not None and not 0.0 <= args.top_p <= 1.0:
        raise UsageError(tr("--top-p must be between 0 and 1"))
    if args.no_repeat_ngram is not None and args.no_repeat_ngram < 0:
        raise UsageError(tr("--no-repeat-ngram must be 0 (off) or more"))


def prompt_ids(prompt: str, int_to_char: dict[int, str], model: str | None = None) -> Any:
    """The prompt as a (1, T) tensor of ids of the vocabulary of the model (named by
    `model`, else "the model"); UsageError if it cannot spell it, or if it is empty."""
    from grader.model import artifacts

    try:
        ids = artifacts.encode(prompt, int_to_char)
    except ValueError as exc:
        chars = "".join(int_to_char.values())
        raise UsageError(tr("{error}; the model knows only {chars!r}", error=exc, chars=chars)
                         if model is None else
                         tr("{error}; {model} knows only {chars!r}", error=exc, model=model,
                            chars=chars)) from None
    if ids.shape[1] == 0:
        raise UsageError(tr("give a prompt of at least one character"))
    return ids


def fresh_seed() -> int:
    """A seed for a plain `talk`: another text each time, short enough to type again."""
    import secrets

    return secrets.randbelow(100_000)


def sentences(text: str) -> list[str]:
    """The text in pieces that end right after `.`, `!` or `?`, as problem 14's
    stream_generate(unit="sentence") cuts them; the rest is the last piece, and no
    piece is empty."""
    import re

    return [piece for piece in re.split(r"(?<=[.!?])", text) if piece]
