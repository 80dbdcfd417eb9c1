"""Judging generated text step by step: where the learner's text differs from the
reference's, was the learner's token a fair pick at that step?

torch.multinomial(probs, 1) draws exponentials q and takes argmax(probs / q), so
the grader can replay each step and see how close the runner-up was: a token
within TIE_RTOL of the best one is the same algorithm rounding differently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from grader.grading.judging.any_result import expect_type, result_of, side_by_side
from grader.grading.judging.cached_steps import expect_no_calls_for_no_text
from grader.grading.subject import cases
from grader.grading.subject.kata import Call
from grader.grading.subject.reference import fresh_args
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import TIE_RTOL
from grader.locale import tr


def sampling_scores(probs: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """torch.multinomial(probs, 1) draws exponentials q and takes argmax(probs / q).

    Knowing that lets the grader see how close the runner-up was at any step.
    """
    return probs.double() / q.double()


def exponentials(vocab_size: int, state: torch.Tensor) -> torch.Tensor:
    """The exponentials torch.multinomial draws from a generator in `state`, for
    float32 probabilities. They are drawn in float32 as it draws them: before
    torch 2.7 float64 ones were other numbers (tests/test_torch_versions.py)."""
    generator = torch.Generator()
    generator.set_state(state)
    return torch.empty(vocab_size, dtype=torch.float32).exponential_(1, generator=generator)


@dataclass(frozen=True)
class Choice:
    """The reference's pick at one step of generation, and the picks as good as it."""

    probs: torch.Tensor  # the next-token probabilities, for the report
    best: int
    fair: torch.Tensor  # per token: the pick, or tied with it up to float rounding


def sampled_choice(probs: torch.Tensor, state: torch.Tensor) -> Choice:
    """torch.multinomial's pick from a generator in `state`; a token whose score is
    within TIE_RTOL of the best is a fair pick."""
    scores = sampling_scores(probs, exponentials(len(probs), state))
    return Choice(probs, int(scores.argmax()), scores >= scores.max() * (1 - TIE_RTOL))


def judge_steps(
    got: Any,
    expected: str,
    *,
    what: str,
    prompt_ids: list[int],
    int_to_char: dict[int, str],
    choose: Callable[[list[int], int], Choice],
    window: Callable[[list[int]], list[int]],
    hint: str = "",
) -> None:
    """Pass text that equals the reference, or differs only at float-noise ties.

    Walks the learner's own text: at each step `choose(window, step)` says
    which tokens the reference could pick after the learner's prefix (a tie
    within float rounding is a fair pick: the same algorithm, rounding
    differently); anything else is a failure at that step, with the evidence.
    """
    expect_type(got, str, what)
    if got == expected:
        return
    if len(got) != len(expected):
        # Asked only where the text is the prompt and as many characters as were made:
        # text too long for another reason (a stream's chunks that repeat the text so
        # far) may still start with a short prompt's characters. An empty prompt never
        # is: the lengths differ.
        prompt = "".join(int_to_char.get(i, "") for i in prompt_ids)
        with_prompt = len(got) == len(prompt) + len(expected) and got.startswith(prompt)
        raise GradeFailure(
            tr("expected {expected} new characters, got {got}", expected=len(expected),
               got=len(got))
            + (tr(" (did you return the prompt too?)") if with_prompt else "")
            + hint
        )
    lookup = ids_of_text(got, int_to_char, hint)
    ids = list(prompt_ids)
    for step, char in enumerate(got):
        choice = choose(window(ids), step)
        chosen = lookup[char]
        if not bool(choice.fair[chosen]):
            raise GradeFailure(divergence_report(got, step, ids, window, choice.probs,
                                                 choice.best, chosen, int_to_char, expected)
                               + hint)
        ids.append(chosen)


def reset_sampling_choice(model: torch.nn.Module, window: list[int]) -> Choice:
    """Track 1's pick after `window`: seed 0 and the generator restored after every
    draw, so every step draws the same random numbers."""
    return sampled_choice(cases.next_token_probs(model, window), cases.seed_state(0))


def judge_reset_sampled_text(got: Any, expected: str, *, model: torch.nn.Module,
                             prompt_ids: list[int], context_length: int,
                             int_to_char: dict[int, str], what: str) -> None:
    """judge_steps for text sampled as Track 1 samples (see reset_sampling_choice)."""
    judge_steps(got, expected, what=what, prompt_ids=prompt_ids, int_to_char=int_to_char,
                choose=lambda window, step: reset_sampling_choice(model, window),
                window=lambda ids: ids[-context_length:])


def judge_reset_sampling(got: Any, expected: str, call: Call) -> None:
    """judge_reset_sampled_text on generate()-style arguments: (model, new_chars,
    context, context_length, int_to_char)."""
    expect_no_calls_for_no_text(call.method, call.args[1], call.record.model_calls or [])
    model, _new_chars, context, context_length, int_to_char = fresh_args(call.args[:5])
    judge_reset_sampled_text(got, expected, model=model, prompt_ids=context[0].tolist(),
                             context_length=context_length, int_to_char=int_to_char,
                             what=result_of(call.method))


def divergence_report(got: str, step: int, ids: list[int], window: Callable, probs: torch.Tensor,
                      best: int, chosen: int, int_to_char: dict[int, str],
                      expected: str) -> str:
    seen = "".join(int_to_char[i] for i in window(ids))
    top = probs.double().topk(min(5, len(probs)))
    table = ", ".join(f"{int_to_char[int(i)]!r} {p:.3f}" for p, i in zip(top.values, top.indices))
    lo = max(0, step - 15)
    n = len(window(ids))
    return "\n".join([
        tr("new character {position} differs: expected {expected!r}, got {got!r} (p={p:.3g})",
           position=step + 1, expected=int_to_char[best], got=int_to_char[chosen],
           p=probs[chosen].item()),
        side_by_side(repr(expected[lo:step + 15]), repr(got[lo:step + 15])),
        # The reference's window over the text so far, which the learner's code should
        # have given the model: what it gave is `gpt-kata trace`'s to show.
        tr("  the reference's window at that step: {seen!r} ({tokens})", seen=seen,
           tokens=tr("{n} token", n=n) if n == 1 else tr("{n} tokens", n=n)),
        tr("  top reference probabilities: {table}", table=table),
    ])


# -- what a generation loop with its own ends (problems 13 and 16) may return ---------------
def ids_of_text(got: str, int_to_char: dict[int, str], hint: str = "") -> dict[str, int]:
    """Each character's token id, once every character of `got` is one the model can
    produce (else a failure, `hint` added to what it says)."""
    lookup = {c: i for i, c in int_to_char.items()}
    unknown = sorted(set(got) - set(lookup))
    if unknown:
        raise GradeFailure(tr("the text holds characters the model cannot produce: {unknown}",
                              unknown=unknown) + hint)
    return lookup


def expect_at_most(got: str, max_new_tokens: int) -> None:
    if len(got) > max_new_tokens:
        raise GradeFailure(tr("the text has {length} characters, more than "
                              "max_new_tokens={max_new_tokens} allows",
                              length=len(got), max_new_tokens=max_new_tokens))


def characters(n: int) -> str:
    """`n` characters, in words: "1 character", "5 characters"."""
    return tr("{n} character", n=n) if n == 1 else tr("{n} characters", n=n)


def around_the_end(got: str, expected: str) -> dict[str, str]:
    """The end of a text that stops too early, and the expected text around that point."""
    return {"expected": repr(expected[max(0, len(got) - 20):len(got) + 20]),
            "got": repr(got[max(0, len(got) - 20):])}
