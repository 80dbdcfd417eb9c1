"""Checks for problem 7, greedy: always the most likely token."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from grader.grading.cases import generation_cases, generation_prompts
from grader.grading.contract import Call, Contract
from grader.grading.judges import Choice, expect_text, judge_steps
from grader.grading.skeleton import TIE_RTOL, GradeFailure, Kata, Mistake, fresh_args, raised
from grader.grading.strategies import generation_example, vocab


def cases() -> dict[str, tuple]:
    # The shared prompts but two, which greedy's goldens were made with.
    return generation_cases(generation_prompts() | {"short-context": ("Once upon a time,", 60),
                                                     "one-char": ("Tom", 1)})


def loop(model, new_chars, context, context_length, int_to_char, *, crop="last", position=-1,
         pick="argmax", whole=False):
    """The reference loop with one knob per known mistake."""
    generator = torch.manual_seed(0)
    initial_state = generator.get_state()
    new = []
    for _ in range(new_chars):
        if crop == "last" and context.shape[1] > context_length:
            context = context[:, -context_length:]
        elif crop == "first" and context.shape[1] > context_length:
            context = context[:, :context_length]
        logits = model(context)[:, position, :]
        if pick == "argmax":
            next_token = logits.argmax(dim=-1, keepdim=True)
        elif pick == "argmin":
            next_token = logits.argmin(dim=-1, keepdim=True)
        else:
            next_token = torch.multinomial(torch.softmax(logits, dim=-1), 1, generator=generator)
            if pick == "sample-restored":
                generator.set_state(initial_state)
        context = torch.cat((context, next_token), dim=1)
        new.append(int(next_token))
    kept = context[0].tolist() if whole else new
    return "".join(int_to_char[i] for i in kept)


MISTAKES = [
    Mistake("take the least likely token (argmin) instead of the most likely",
            "the most likely token has the largest logit: logits.argmax(dim=-1, keepdim=True)",
            lambda *a: loop(*a, pick="argmin")),
    Mistake("crop the wrong end of the context (keep the oldest tokens)",
            "keep the most recent tokens: context[:, -context_length:]",
            lambda *a: loop(*a, crop="first")),
    Mistake("do not crop the context",
            "crop to the last context_length tokens before every forward pass",
            lambda *a: loop(*a, crop="none")),
    Mistake("use the first position's logits instead of the last",
            "the next token is predicted at the last position: logits[:, -1, :]",
            lambda *a: loop(*a, position=0)),
    Mistake("return the prompt as well as the new characters",
            "return only the new_chars characters you generated",
            lambda *a: loop(*a, whole=True)),
    Mistake("sample a token (torch.multinomial) instead of taking the most likely one",
            "greedy decoding has no randomness: next_token = logits.argmax(dim=-1, keepdim=True)",
            lambda *a: loop(*a, pick="sample-restored")),
    Mistake("sample a token (torch.multinomial) instead of taking the most likely one",
            "greedy decoding has no randomness: next_token = logits.argmax(dim=-1, keepdim=True)",
            lambda *a: loop(*a, pick="sample")),
]


@torch.no_grad()
def greedy_choice(model: torch.nn.Module, window: list[int]) -> Choice:
    """The argmax after `window`; a token whose logit is within float tolerance of the
    largest is a fair pick (the same argmax on a computation that rounds differently)."""
    logits = model(torch.tensor([window], dtype=torch.long))[0, -1].double()
    best = int(logits.argmax())
    fair = logits >= logits[best] - TIE_RTOL * max(1.0, float(logits[best].abs()))
    return Choice(torch.softmax(logits, dim=-1), best, fair)


def judge(got: Any, expected: str, call: Call) -> None:
    model, _, context, context_length, int_to_char = fresh_args(call.args)
    judge_steps(got, expected, what="greedy()'s result", prompt_ids=context[0].tolist(),
                int_to_char=int_to_char, choose=lambda ids, step: greedy_choice(model, ids),
                window=lambda ids: ids[-context_length:])


CONTRACT = Contract(
    problem="greedy", method="greedy",
    arg_names=("model", "new_chars", "context", "context_length", "int_to_char"),
    cases=cases, judge=judge, mistakes=MISTAKES,
)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The greedy text for a fixed prompt on the shipped model",
    "The greedy text on small random models of other sizes, against the reference",
    generation_example)


TIED_LOGITS = {
    "two-tied": [0.5, 2.0, -1.0, 2.0, 1.0],
    "three-tied-among-six": [1.0, -3.0, 4.0, 4.0, 0.0, 4.0],
    "all-tied": [0.0] * 12,
}


@pytest.mark.parametrize("case_id", list(TIED_LOGITS))
def test_ties_pick_the_first(kata: Kata, case_id: str) -> None:
    """On a model whose largest logits tie exactly, the lowest token id is picked"""
    row = torch.tensor(TIED_LOGITS[case_id])
    int_to_char = vocab(len(row))
    expected = int_to_char[int(row.argmax())] * 6
    got = kata.outcome("harness:greedy_with_fixed_logits", row, 6, torch.tensor([[0, 1]]), 4,
                       int_to_char, arg_names=("logits", *CONTRACT.arg_names[1:]))
    if got[0] == "error":
        raise GradeFailure(f"on a stand-in model whose logits tie, {raised('greedy', got)}")
    try:
        expect_text(got[1], expected, "the text on a model with tied logits")
    except GradeFailure as failure:
        tied = [i for i, x in enumerate(row.tolist()) if x == row.max()]
        picked = set(got[1]) if isinstance(got[1], str) else set()
        why = (f"\nThe model's logits are {row.tolist()} at every step: tokens {tied} tie "
               f"for the largest. Greedy takes the first of them, token {tied[0]} "
               f"({int_to_char[tied[0]]!r}), every time.")
        if len(picked) == 1 and picked < {int_to_char[i] for i in tied[1:]}:
            why += (" logits.argmax(dim=-1) returns the first; torch.topk and an unstable "
                    "sort may return any of the tied ones.")
        raise GradeFailure(failure.message + why) from None
