"""Checks for problem 27, lr-schedule: linear warm-up, then cosine decay to a floor.

The schedule is the one `gpt-kata train` follows (grader/model/training.py's
learning_rate), so the fixed cases include its whole default run's landmarks.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import RTOL
from grader.locale import tr
from grader.wording import a_kind

# A rate is judged relative to itself (RTOL); a rate near zero, to the run's peak.
PEAK_ATOL = 1e-9


def schedule(step: int, max_lr: float, min_lr: float, warmup_steps: int, steps: int, *,
             late_end: bool = False, from_zero: bool = False, one_more: bool = False,
             clamped: bool = True, span: str = "after the warm-up",
             floor: bool = True, ahead: int = 0, whole: bool = False,
             swing: str = "max_lr - min_lr", period: float = 1.0,
             curve: str = "cosine") -> float:
    """The schedule, or one of its known mistakes: `late_end` keeps climbing one step
    longer (step <= warmup_steps), `from_zero` starts the line at 0, `one_more`
    divides it by warmup_steps + 1 (nanoGPT's train.py), `clamped=False`
    lets the cosine run on past the last step, and `span` says what the cosine is
    spread over ("the whole run": step / steps), `floor=False` lets the cosine fall
    to 0 instead of min_lr, and `ahead` counts the decay's steps from that many early;
    `whole` divides the progress with // (0 until the end, so the rate stays at the
    peak), `span="one step short"` ends the cosine at step steps - 1, and
    `swing="max_lr"` swings the cosine by max_lr above the floor, not by max_lr -
    min_lr, and `period=2.0` runs a whole period of the cosine, back up to the peak;
    `curve="linear"` falls along a straight line from the peak to the floor instead."""
    if step < warmup_steps + late_end:
        return max_lr * (step + (not from_zero)) / (warmup_steps + one_more)
    if span == "the whole run":
        progress = step / max(1, steps)
    elif span == "one step short":
        progress = (step - warmup_steps) / max(1, steps - warmup_steps - 1)
    elif whole:
        progress = (step - warmup_steps + ahead) // max(1, steps - warmup_steps)
    else:
        progress = (step - warmup_steps + ahead) / max(1, steps - warmup_steps)
    if clamped:
        progress = min(1.0, progress)
    low = min_lr if floor else 0.0
    height = max_lr if swing == "max_lr" else max_lr - low
    if curve == "linear":
        return low + height * (1 - progress)
    return low + 0.5 * height * (1 + math.cos(period * math.pi * progress))


MISTAKES = mistakes_of(globals(), schedule)


def cases() -> dict[str, tuple]:
    train = (3e-3, 3e-4, 100, 3000)  # gpt-kata train's defaults (TrainSettings)
    landmarks = {"first": 0, "second": 1, "last-of-the-warm-up": 99, "first-after-it": 100,
                 "middle-of-the-decay": 1550, "last": 2999, "at-steps": 3000,
                 "past-the-end": 4000}
    found = {f"train-{name}-step": (step, *train) for name, step in landmarks.items()}
    found.update({
        "no-warm-up": (0, 1e-3, 1e-4, 0, 10),
        "no-warm-up-later": (4, 1e-3, 1e-4, 0, 10),
        "a-floor-of-zero-at-the-end": (20, 1e-2, 0.0, 5, 20),
        "one-step-of-warm-up": (0, 1e-2, 1e-3, 1, 50),
        "a-short-run": (7, 1.0, 0.1, 3, 9),
    })
    return found


def draw_example(data: st.DataObject) -> tuple:
    warmup_steps = data.draw(st.integers(0, 20), label="warmup_steps")
    steps = data.draw(st.integers(warmup_steps + 1, 200), label="steps")
    step = data.draw(st.integers(0, steps + 20), label="step")
    max_lr = data.draw(st.sampled_from([1e-4, 3e-3, 1e-2, 1.0]), label="max_lr")
    min_lr = max_lr * data.draw(st.sampled_from([0.0, 0.01, 0.1, 0.5]), label="min_lr / max_lr")
    return step, max_lr, min_lr, warmup_steps, steps


def same_rate(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Whether two outcomes are the same rate (a mistake's match): within the judge's
    tolerance, since different orders of the same sums round differently."""
    if a[0] != "value" or b[0] != "value":
        return a == b
    return is_number(a[1]) and is_number(b[1]) and close(a[1], b[1], b[1])


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def as_rate(value: float) -> float:
    """A number as a float: an int too large for one is an infinity of its sign."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def close(got: float, want: float, peak: float) -> bool:
    got, want, peak = as_rate(got), as_rate(want), as_rate(peak)
    if not all(map(math.isfinite, (got, want, peak))):  # an infinite bound takes anything
        return got == want
    return abs(got - want) <= RTOL * abs(want) + PEAK_ATOL * abs(peak)


def judge(got: Any, expected: float, call: Call) -> None:
    step, max_lr, *_ = call.args
    if not is_number(got):
        raise GradeFailure(tr("learning_rate() returned {what}, not a float",
                              what=a_kind(type(got).__name__)))
    if not math.isfinite(as_rate(got)) or not close(got, expected, max_lr):
        raise GradeFailure(tr("the learning rate at step {step} is {got}, expected {expected}",
                              step=step, got=repr(as_rate(got)), expected=repr(expected)))


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_rate,
                    same_as_golden=same_rate)

test_fixed_steps, test_random_steps = CONTRACT.tests(
    "The rate at landmarks of gpt-kata train's schedule and of short runs",
    "The rate at random steps of random schedules, against the reference",
    draw_example)
