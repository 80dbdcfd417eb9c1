"""Checks for problem 7, greedy: always the most likely token."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import cases
from grader.grading.judges import divergence_report, expect_text, expect_type
from grader.grading.skeleton import TIE_RTOL, GradeFailure, Kata, Mistake, materialise, raised
from grader.grading.strategies import GRADING, random_models, token_contexts, vocab
from grader.model import artifacts

PROBLEM = "greedy"
METHOD = "greedy"
ARG_NAMES = ("model", "new_chars", "context", "context_length", "int_to_char")


def fixed_cases() -> dict[str, tuple[str, int]]:
    """Case id -> (prompt, new_chars) on the shipped model."""
    n = cases.context_length()
    return {
        "short-context": ("Once upon a time,", 60),
        "exact-context": (cases.corpus_prefix(n), 30),
        "long-context": (cases.corpus_prefix(2 * n + 7), 30),
        "zero-chars": ("The cat", 0),
        "one-char": ("Tom", 1),
        "crop-many-times": ("\n", 2 * n + 4),
    }


def fixed_args() -> dict[str, tuple]:
    """The fixed cases as call arguments; their reference outputs are the goldens."""
    return {
        case_id: (cases.SHIPPED, new_chars, cases.prompt_ids(prompt), cases.context_length(),
                  artifacts.shipped_vocab())
        for case_id, (prompt, new_chars) in fixed_cases().items()
    }


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
def judge_greedy_text(got: Any, expected: str, model: torch.nn.Module, prompt_ids: list[int],
                      context_length: int, int_to_char: dict[int, str]) -> None:
    """Pass text that equals the reference, or differs only where two logits tie.

    Walks the learner's own text and, at each step, asks the model for the
    logits after the learner's prefix. A token whose logit is within float
    tolerance of the largest is a fair pick (the same argmax on a computation
    that rounds differently); anything else fails at that step, with evidence.
    """
    expect_type(got, str, "greedy()'s result")
    if got == expected:
        return
    if len(got) != len(expected):
        raise GradeFailure(
            f"expected {len(expected)} new characters, got {len(got)}"
            f"{' (did you return the prompt too?)' if len(got) > len(expected) else ''}"
        )
    lookup = {c: i for i, c in int_to_char.items()}
    unknown = sorted(set(got) - set(lookup))
    if unknown:
        raise GradeFailure(f"the text holds characters the model cannot produce: {unknown}")
    ids = list(prompt_ids)

    def window(ids: list[int]) -> list[int]:
        return ids[-context_length:]

    for step, char in enumerate(got):
        logits = model(torch.tensor([window(ids)], dtype=torch.long))[0, -1].double()
        best, chosen = int(logits.argmax()), lookup[char]
        if logits[chosen] < logits[best] - TIE_RTOL * max(1.0, float(logits[best].abs())):
            raise GradeFailure(divergence_report(
                got, step, ids, window, torch.softmax(logits, dim=-1), best, chosen,
                int_to_char, expected))
        ids.append(chosen)


def check(kata: Kata, args: tuple, case_id: str | None = None) -> None:
    got, live = kata.compare(METHOD, *args, arg_names=ARG_NAMES)
    model, new_chars, context, context_length, int_to_char = (materialise(a) for a in args)
    expected = kata.expected(case_id, live) if case_id else live
    try:
        if got[0] == "error":
            raise GradeFailure(raised(METHOD, got))
        judge_greedy_text(got[1], expected, model, context[0].tolist(), context_length,
                          int_to_char)
    except GradeFailure as failure:
        raise GradeFailure(failure.message,
                           lambda: kata.diagnose(got, MISTAKES, *args)) from None


@pytest.mark.parametrize("case_id", list(fixed_cases()))
def test_shipped_model(kata: Kata, case_id: str) -> None:
    """The greedy text for a fixed prompt on the shipped model"""
    check(kata, fixed_args()[case_id], case_id)


@GRADING
@given(data=st.data())
def test_random_models(kata: Kata, data: st.DataObject) -> None:
    """The greedy text on small random models of other sizes, against the reference"""
    spec = data.draw(random_models(), label="model")
    n, size = spec.config["context_length"], spec.config["vocab_size"]
    context = data.draw(token_contexts(size, max_length=3 * n), label="context")
    new_chars = data.draw(st.integers(0, 3 * n), label="new_chars")
    check(kata, (spec, new_chars, context, n, vocab(size)))


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
                       int_to_char, arg_names=("logits", *ARG_NAMES[1:]))
    if got[0] == "error":
        raise GradeFailure(f"on a stand-in model whose logits tie, {raised(METHOD, got)}")
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
