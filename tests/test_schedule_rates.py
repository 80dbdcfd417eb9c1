"""A training loop's own schedule, judged from the rates each optimizer.step() read:
the first step and param group at another rate is named, rounding is not."""

from __future__ import annotations

from grader.grading.judging.schedule_rates import first_other_rate

WANT = [(0.005, 0.005), (0.01, 0.01), (0.001, 0.001)]


def test_the_same_rates_name_nothing_and_rounding_is_the_same() -> None:
    assert first_other_rate(list(WANT), WANT) == ""
    # The cosine written another way: a few 1e-16 apart.
    assert first_other_rate([(r * (1 + 3e-16), r) for r, _ in WANT], WANT) == ""
    # Lists, as the rates come back from a copy's stored answer.
    assert first_other_rate([list(groups) for groups in WANT], [list(g) for g in WANT]) == ""


def test_the_first_step_and_group_at_another_rate_is_named() -> None:
    got = [(0.005, 0.005), (0.01, 0.009), (0.0, 0.0)]
    assert first_other_rate(got, WANT) == (
        "step 1 ran at a learning rate of 0.009 (param group 1), expected 0.01: problem 27's "
        "learning_rate(1, max_lr, min_lr, warmup_steps, steps)")
    assert first_other_rate([(0.0, 0.0), *WANT[1:]], WANT).startswith(
        "step 0 ran at a learning rate of 0 (param group 0), expected 0.005")


def test_rates_that_cannot_be_read_name_nothing() -> None:
    """What other evidence says better: a group dropped, no rates, rates of no number."""
    assert first_other_rate([(0.005,), (0.01,)], WANT) == ""
    assert first_other_rate("a str", WANT) == ""
    assert first_other_rate([(), ()], WANT) == ""
    assert first_other_rate([("0.005", 0.005)], WANT) == ""
    assert first_other_rate([(True, 0.005)], WANT) == ""
