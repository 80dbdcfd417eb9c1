"""The instructor's seed (GPT_KATA_EXAMPLES_SEED): the checks' drawn examples come from it
when it is set, so that they are not the ones anyone holding the checks can draw."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import strategies
from grader.grading.strategies import SEED_VARIABLE


def draws(description: str = "a check's examples") -> list[int]:
    """What a test decorated as the checks decorate theirs draws, decorated now (the
    seed is read when a check module is loaded)."""
    seen: list[int] = []

    def test(data: st.DataObject) -> None:
        seen.append(data.draw(st.integers(0, 2**62)))

    test.__doc__ = description
    strategies.GRADING(given(data=st.data())(test))()
    return seen


def test_without_a_seed_the_examples_are_the_derandomised_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert draws() == draws()
    monkeypatch.setenv(SEED_VARIABLE, "")
    assert draws() == draws()  # an empty value is no seed


def test_a_seed_draws_other_examples_the_same_on_every_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    public = draws()
    monkeypatch.setenv(SEED_VARIABLE, "271828")
    seeded = draws()
    assert seeded == draws()  # a grade is still deterministic, given the seed
    assert set(seeded[1:]).isdisjoint(public[1:])  # (both begin at the simplest example)
    monkeypatch.setenv(SEED_VARIABLE, "271829")
    assert draws()[1:] != seeded[1:]


def test_two_tests_under_one_seed_draw_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests made by one function (Contract.example_test) differ by their description."""
    monkeypatch.setenv(SEED_VARIABLE, "271828")
    assert draws("random logits")[1:] != draws("exact boundaries")[1:]
