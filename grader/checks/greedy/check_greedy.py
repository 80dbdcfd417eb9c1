"""Checks for problem 7, greedy: always the most likely token."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_text
from grader.grading.judging.cached_steps import expect_no_calls_for_no_text
from grader.grading.judging.generated_text import Choice, judge_steps
from grader.grading.subject.cases import generation_cases, generation_prompts, other_window_cases
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes import generation_loop
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.reference import fresh_args
from grader.grading.subject.strategies import generation_example, vocab
from grader.grading.values.equality import raised
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import TIE_RTOL
from grader.locale import tr


def cases() -> dict[str, tuple]:
    # The shared prompts but two, which greedy's goldens were made with.
    return generation_cases(generation_prompts() | {"short-context": ("Once upon a time,", 60),
                                                     "one-char": ("Tom", 1)})


MISTAKES = mistakes_of(globals(), generation_loop)


@torch.no_grad()
def greedy_choice(model: torch.nn.Module, window: list[int]) -> Choice:
    """The argmax after `window`; a token whose logit is within float tolerance of the
    largest is a fair pick (the same argmax on a computation that rounds differently)."""
    logits = model(torch.tensor([window], dtype=torch.long))[0, -1].double()
    best = int(logits.argmax())
    fair = logits >= logits[best] - TIE_RTOL * max(1.0, float(logits[best].abs()))
    return Choice(torch.softmax(logits, dim=-1), best, fair)


def judge(got: Any, expected: str, call: Call) -> None:
    expect_no_calls_for_no_text(call.method, call.args[1], call.record.model_calls or [])
    model, _, context, context_length, int_to_char = fresh_args(call.args)
    judge_steps(got, expected, what=tr("greedy()'s result"), prompt_ids=context[0].tolist(),
                int_to_char=int_to_char, choose=lambda ids, step: greedy_choice(model, ids),
                window=lambda ids: ids[-context_length:])


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, tell_apart_on_cases=True,
                    telling=other_window_cases)

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
        raise GradeFailure(tr("on a stand-in model whose logits tie, {raised}",
                              raised=raised("greedy", got)))
    try:
        expect_text(got[1], expected, tr("the text on a model with tied logits"))
    except GradeFailure as failure:
        tied = [i for i, x in enumerate(row.tolist()) if x == row.max()]
        picked = set(got[1]) if isinstance(got[1], str) else set()
        why = "\n" + tr("The model's logits are {logits} at every step: tokens {tied} tie for "
                        "the largest. Greedy takes the first of them, token {first} ({char}), "
                        "every time.", logits=row.tolist(), tied=tied, first=tied[0],
                        char=repr(int_to_char[tied[0]]))
        if len(picked) == 1 and picked < {int_to_char[i] for i in tied[1:]}:
            why += " " + tr("logits.argmax(dim=-1) returns the first; torch.topk and an "
                            "unstable sort may return any of the tied ones.")
        raise GradeFailure(failure.message + why) from None

# A learners' copy judges the calls its exported model saw with new_chars=0 by the same
# rule (grader/release/build.py's CALL_RULES).
PRACTICE_CALLS = "no-calls-for-no-text"
