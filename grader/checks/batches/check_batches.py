"""Checks for problem 19, batches: random windows drawn with a given generator."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract, Refusal
from grader.grading.judging.any_result import expect_pair
from grader.grading.subject.cases import context_length, corpus_ids
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.reference import fresh
from grader.grading.values.equality import same_pair
from grader.grading.values.failures import GradeFailure
from grader.locale import marked, tr


def batch_args(data: torch.Tensor, n: int, batch_size: int, seed: int) -> tuple:
    return data, n, batch_size, torch.Generator().manual_seed(seed)


def windows_at(data: torch.Tensor, starts: torch.Tensor, n: int,
               shift: int = 1, dim: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.stack([data[s:s + n] for s in starts.tolist()], dim=dim)
    y = torch.stack([data[s + shift:s + shift + n] for s in starts.tolist()], dim=dim)
    return x, y


def drawn(high: int, d: torch.Tensor, n: int, b: int, g: torch.Generator, **knobs: int):
    """The batch from starts torch.randint(high, (b,)) draws, with a knob for a mistake."""
    return windows_at(d, torch.randint(high, (b,), generator=g), n, **knobs)


def two_draws(d: torch.Tensor, n: int, b: int, g: torch.Generator):
    x_starts = torch.randint(len(d) - n, (b,), generator=g)
    y_starts = torch.randint(len(d) - n, (b,), generator=g)
    return windows_at(d, x_starts, n)[0], windows_at(d, y_starts, n)[1]


def forget_to_shift_the_targets(d, n, b, g):
    return drawn(len(d) - n, d, n, b, g, shift=0)


def draw_starts_below_one_less(d, n, b, g):
    return drawn(len(d) - n - 1, d, n, b, g)


def draw_starts_below_one_more(d, n, b, g):
    return drawn(len(d) - n + 1, d, n, b, g)


def draw_distinct_starts_with_torch_randperm(d, n, b, g):
    return windows_at(d, torch.randperm(len(d) - n, generator=g)[:b], n)


def stack_the_windows_along_the_wrong_dimension(d, n, b, g):
    return drawn(len(d) - n, d, n, b, g, dim=1)


def seed_the_generator_inside_get_batch(d, n, b, g, seed: int = 0):
    # The learner's own manual_seed(seed) on the generator given: every batch the same.
    return drawn(len(d) - n, d, n, b, torch.Generator().manual_seed(seed))


def roll_x_for_the_targets(d, n, b, g):
    x, _ = drawn(len(d) - n, d, n, b, g)
    return x, x.roll(-1, dims=1)


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    data = corpus_ids(2000)
    n = context_length()
    return {
        "four-windows": batch_args(data, n, 4, 0),
        "other-seed": batch_args(data, n, 4, 1234),
        "one-window": batch_args(data, 8, 1, 0),
        "a-training-batch": batch_args(data, n, 64, 7),
        "only-one-start": batch_args(corpus_ids(n + 1), n, 3, 0),
    }


def draw_example(data: st.DataObject) -> tuple:
    n = data.draw(st.integers(1, 12), label="context_length")
    ids = data.draw(st.lists(st.integers(0, 39), min_size=n + 1, max_size=n + 40), label="data")
    b = data.draw(st.integers(1, 8), label="batch_size")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed of the generator")
    return batch_args(torch.tensor(ids, dtype=torch.long), n, b, seed)


def state_after_one_draw(call: Call) -> torch.Tensor:
    """Where the one torch.randint call of the statement leaves the caller's generator."""
    data, n, batch_size, generator = call.args
    copy = fresh(generator)
    torch.randint(len(data) - n, (batch_size,), generator=copy)
    return copy.get_state()


def judge(got: Any, expected: tuple, call: Call) -> None:
    initial = call.args[3].get_state()
    after = call.record.after.get(3) if call.record.after else None
    untouched = after is not None and torch.equal(after.get_state(), initial)
    try:
        expect_pair(got, expected, "get_batch",
                    (tr("the input batch x"), tr("the target batch y")))
    except GradeFailure as failure:
        hint = ""
        if untouched:
            hint = "\n" + tr("The generator passed in was never used, or drew nothing: draw "
                             "the starts with torch.randint(..., generator=generator). (The "
                             "global random state leaves it where it started, and so does "
                             "torch.randperm(1).)")
        raise GradeFailure(failure.message + hint) from None
    if untouched:
        raise GradeFailure(tr("the generator passed in is where it started: it was never "
                              "used (pass generator=generator to torch.randint) or it was put "
                              "back, or the call given it drew nothing (as torch.randperm(1)); "
                              "leave it where torch.randint left it, or the next batch repeats "
                              "this one"))
    if after is None or not torch.equal(after.get_state(), state_after_one_draw(call)):
        raise GradeFailure(tr("the batch is right, but the generator was used for more than "
                              "the one torch.randint call of batch_size starts, so the next "
                              "batch will not be the expected one"))


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_pair,
                    refusals=lambda: {"no-window": Refusal(
                        batch_args(torch.arange(5), 5, 2, 0),
                        "get_batch(arange(5), context_length=5, ...)",
                        marked("a window of 5 tokens needs a sixth for its last target"))})

test_shipped_corpus, test_random_data = CONTRACT.tests(
    "A batch of a fixed stretch of the corpus, and the generator moved on",
    "Batches of random data, sizes and seeds, against the reference",
    draw_example)


test_no_window = CONTRACT.refusal_test(
    "Data of context_length tokens or fewer holds no window: refused", "no-window")
