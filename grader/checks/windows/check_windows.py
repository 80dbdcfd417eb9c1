"""Checks for problem 18, windows: an input window and its target, shifted by one."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract, Refusal
from grader.grading.judging.any_result import comparing, expect_pair
from grader.grading.subject.cases import context_length, corpus_ids
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.values.equality import same_pair
from grader.grading.values.failures import Diagnosis, naming
from grader.locale import marked, tr


def forget_to_shift_the_target(d, n, i):
    return (d[i:i + n], d[i:i + n])


def shift_the_target_the_wrong_way(d, n, i):
    return (d[i:i + n], d[i - 1:i + n - 1])


def swap_the_input_and_the_target(d, n, i):
    return (d[i + 1:i + n + 1], d[i:i + n])


def make_the_windows_one_token_short(d, n, i):
    return (d[i:i + n - 1], d[i + 1:i + n])


def make_the_windows_one_token_long(d, n, i):
    return (d[i:i + n + 1], d[i + 1:i + n + 2])


MISTAKES = mistakes_of(globals())

def count_one_window_too_many(d, n, i):
    return (d[i:i + n], d[i + 1:i + n + 1])


# Counting len(data) - context_length + 1 windows: the last one's target is short.
COUNT_ONE_TOO_MANY = mistakes_of(globals(), table="count-one-too-many")


def count_one_window_too_few(d, n, i):
    if not 0 <= i < len(d) - n - 1:
        raise ValueError(f"no window {i}")
    return (d[i:i + n], d[i + 1:i + n + 1])


# Counting len(data) - context_length - 1 windows: the last whole one is refused. Only
# a value can match a mistake's, so the failing call names this one (refusing_the_last).
COUNT_ONE_TOO_FEW = mistakes_of(globals(), table="count-one-too-few")


def refusing_the_last(call: Call) -> Diagnosis | str:
    """Names the mistake where the learner raised ValueError for the last window."""
    data, n, i = call.args
    if (call.outcome[0] == "error" and getattr(call.outcome[1], "type", "") == "ValueError"
            and i == len(data) - n - 1):
        return naming(*COUNT_ONE_TOO_FEW)
    return ""


def cases() -> dict[str, tuple]:
    data = corpus_ids(200)
    n = context_length()
    return {
        "first-window": (data, n, 0),
        "a-middle-window": (data, n, 57),
        "last-window": (data, n, len(data) - n - 1),
        "one-token-windows": (data, 1, 10),
        "the-only-window": (corpus_ids(n + 1), n, 0),
    }


def draw_example(data: st.DataObject) -> tuple:
    n = data.draw(st.integers(1, 12), label="context_length")
    ids = data.draw(st.lists(st.integers(0, 39), min_size=n + 1, max_size=n + 30), label="data")
    i = data.draw(st.integers(0, len(ids) - n - 1), label="i")
    return torch.tensor(ids, dtype=torch.long), n, i


def refusals() -> dict[str, Refusal]:
    return {
        "one-past-the-last": Refusal(
            (torch.arange(10), 3, 7), "window(arange(10), 3, i=7)",
            marked("window 7's target would end at index 10, past the last of 10 tokens "
                   "(index 9)"), COUNT_ONE_TOO_MANY),
        "negative": Refusal(
            (torch.arange(10), 3, -1), "window(arange(10), 3, i=-1)",
            marked("windows are numbered from 0; a negative slice start counts from the end "
                   "and cuts a window that does not exist")),
    }


CONTRACT = Contract(cases=cases, refusals=refusals, mistakes=MISTAKES, matches=same_pair,
                    fallback_hint=refusing_the_last,
                    judge=comparing(expect_pair, "window",
                                    names=(marked("the input window x"),
                                           marked("the target window y"))))

test_shipped_corpus, test_random_data = CONTRACT.tests(
    "The windows of a fixed stretch of the corpus",
    "Windows of random data and context lengths, against the reference",
    draw_example)


def test_worked_example(kata: Kata) -> None:
    """A worked example: window 2 of 0..9 with 3 tokens is (2, 3, 4) and (3, 4, 5)"""
    got = kata.run(CONTRACT.method, torch.arange(10), 3, 2, arg_names=CONTRACT.arg_names)
    expect_pair(got, (torch.tensor([2, 3, 4]), torch.tensor([3, 4, 5])), "window",
                (tr("x of {call}", call="window(arange(10), 3, 2)"),
                 tr("y of {call}", call="window(arange(10), 3, 2)")))


test_one_past_the_last_window = CONTRACT.refusal_test(
    "There are len(data) - context_length windows: the next one is refused",
    "one-past-the-last")
test_negative_start = CONTRACT.refusal_test("A negative window number is refused", "negative")
