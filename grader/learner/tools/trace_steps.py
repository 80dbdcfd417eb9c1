"""A generation run as steps: the window the model saw and the token picked after it.

Both runs are read from their forward passes, as (token ids given, tokens
already cached) per pass: the learner's from the witness, which serves its
model calls in the grader (grader/sandbox/host/witness.py), the reference's from a
recording wrapper around the model. One pass is one step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from grader.grading.subject.cases import next_token_probs
from grader.grading.values.tolerances import CACHE_ATOL


@dataclass(frozen=True)
class Step:
    number: int  # counted from 1: step 1 makes the first new character
    window: tuple[int, ...]  # what the model read at this step
    pick: int | None  # the token appended after it; None where the run does not show it
    # The next-token probabilities the model gave the run at this step. With a
    # cache they can differ from the window's read afresh (keys from old positions).
    told: torch.Tensor | None = None


@dataclass(frozen=True)
class Run:
    steps: list[Step]
    text: str  # what the method answered, as text
    not_text: str = ""  # the type of what it answered, where that is no text


class RecordingModel:
    """The reference's model, noting the token ids of every forward pass.

    The reference is the grader's own code, so it runs here; it sees a model
    that behaves exactly as the real one.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.passes: list[tuple[list[int], int]] = []
        self.told: list[torch.Tensor] = []

    def __call__(self, context: torch.Tensor) -> Any:
        logits = self.model(context)
        self.passes.append((context[0].tolist(), 0))
        self.told.append(logits[0, -1].clone())
        return logits

    def forward(self, context: torch.Tensor) -> Any:
        return self(context)

    def forward_with_cache(self, context: torch.Tensor, cache: Any = None) -> Any:
        past = int(cache[0][0].shape[2]) if cache else 0
        logits, new_cache = self.model.forward_with_cache(context, cache)
        self.passes.append((context[0].tolist(), past))
        self.told.append(logits[0, -1].clone())
        return logits, new_cache

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


def windows(passes: Sequence[tuple[Sequence[int], int]]) -> list[tuple[int, ...]]:
    """What the model read at each pass.

    A pass that reuses `past` cached tokens reads the last `past` tokens of the
    window before it, then its new ones. (A cache cut some other way than from
    the front is not shown as such: the window is then the one a correct cache
    of that length would hold.)
    """
    seen: tuple[int, ...] = ()
    made = []
    for tokens, past in passes:
        window = (seen[len(seen) - past:] if past else ()) + tuple(int(t) for t in tokens)
        made.append(window)
        seen = window
    return made


def steps_of(passes: Sequence[tuple[Sequence[int], int]], text_ids: list[int] | None,
             told: Sequence[torch.Tensor] = ()) -> list[Step]:
    """One step per forward pass, with the token picked after it.

    When the text has one token per pass, its tokens are the picks. Otherwise
    (a text cut at a stop string, or with the prompt in front) each pick is
    read from the next window, where it was appended; the last step's pick is
    then the text's last token, when the text is long enough to hold it.
    `told` holds the logits each pass answered at its last position.
    """
    seen = windows(passes)
    n = len(seen)
    if text_ids is not None and len(text_ids) == n:
        picks: list[int | None] = list(text_ids)
    else:
        picks = [later[-1] if later else None for later in seen[1:]]
        if n:
            picks.append(text_ids[-1] if text_ids and len(text_ids) >= n else None)
    probs = [torch.softmax(logits.double(), dim=-1) for logits in told]
    return [Step(i + 1, window, pick, probs[i] if i < len(probs) else None)
            for i, (window, pick) in enumerate(zip(seen, picks))]


def first_difference(yours: list[Step], reference: list[Step],
                     probs: Distributions | None = None) -> int | None:
    """The index of the first step where the two runs differ, or None.

    With `probs`, a step whose model answered otherwise than it answers the same
    window read afresh differs too, even where the windows and the picks agree.
    """
    for i in range(max(len(yours), len(reference))):
        if i >= len(yours) or i >= len(reference):
            return i
        if yours[i].window != reference[i].window or yours[i].pick != reference[i].pick:
            return i
        if probs is not None and misled(yours[i], probs) is not None:
            return i
    return None


def misled(step: Step, probs: Distributions) -> tuple[int, float] | None:
    """Where the model's answer at this step strays from the window read afresh: the
    token whose probability moved most and by how much; None if it does not stray."""
    fresh = probs(step.window)
    if step.told is None or fresh is None or step.told.shape != fresh.shape:
        return None
    gaps = (step.told - fresh).abs()
    worst = int(gaps.argmax())  # a nan gap counts as the largest
    # Asked as "not within": probabilities a broken cache left nan stray too.
    return None if float(gaps[worst]) <= CACHE_ATOL else (worst, float(gaps[worst]))


class Distributions:
    """The reference's next-token probabilities for any window, computed once each."""

    def __init__(self, model: torch.nn.Module, context_length: int) -> None:
        self.model = model
        self.context_length = context_length
        self.known: dict[tuple[int, ...], torch.Tensor] = {}

    def __call__(self, window: tuple[int, ...]) -> torch.Tensor | None:
        if not window or len(window) > self.context_length:
            return None  # nothing to predict from, or more than the model can read
        if window not in self.known:
            self.known[window] = next_token_probs(self.model, list(window))
        return self.known[window]

    def top(self, window: tuple[int, ...], k: int) -> list[tuple[int, float]]:
        probs = self(window)
        if probs is None:
            return []
        values, ids = probs.topk(min(k, probs.numel()))
        return [(int(i), float(v)) for i, v in zip(ids, values)]

    def of(self, window: tuple[int, ...], token: int | None) -> float | None:
        probs = self(window)
        if probs is None or token is None or not 0 <= token < probs.numel():
            return None
        return float(probs[token])
