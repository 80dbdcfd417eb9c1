"""Checks for problem 6, generate: the whole sampling loop."""

from __future__ import annotations

from functools import partial

from grader.grading.cases import generation_cases
from grader.grading.contract import Contract
from grader.grading.failures import Mistake
from grader.grading.mistakes import NOT_RESTORED, generation_loop, window_mistakes
from grader.grading.sampling_judges import judge_reset_sampling
from grader.grading.strategies import generation_example

MISTAKES = [
    Mistake("take the most likely token (argmax) instead of sampling",
            "draw the token with torch.multinomial(probs, 1, generator=generator)",
            partial(generation_loop, pick="argmax")),
    Mistake(*NOT_RESTORED, partial(generation_loop, restore=False)),
    *window_mistakes(),
    # Sampling every position gives a token per position: the last's or the first's is kept.
    Mistake("sample from all positions instead of the last",
            "keep only the last position before softmax: logits[:, -1, :]",
            partial(generation_loop, keep_row=-1), partial(generation_loop, keep_row=0)),
    Mistake("take softmax over the batch dimension", "softmax over the vocabulary: dim=-1",
            partial(generation_loop, softmax_dim=0)),
]


CONTRACT = Contract(cases=generation_cases, judge=judge_reset_sampling, mistakes=MISTAKES)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt on the shipped model",
    "The text on small random models of other sizes, against the reference",
    generation_example)
