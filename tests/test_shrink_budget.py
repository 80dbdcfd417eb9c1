"""A failing drawn test shrinks its example within a budget of calls (ShrinkBudget), so
that a failing grade does not spend most of its time shrinking; the example it reports
still fails, and every run of the test has a budget of its own."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.subject import strategies
from grader.grading.subject.strategies import SHRINK_CALLS
from grader.grading.values.failures import GradeFailure

LIMIT = 5000


class WrongAboveALimit:
    """A learner's answer as a contract sees it: wrong wherever the numbers drawn add up
    to more than 5000, which hypothesis shrinks in hundreds of attempts (257 after the
    first failure here), towards numbers that add up to 5001. Lists of 10 to 20 keep
    that within seconds; 40 to 80 took hypothesis half a minute a test."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def check(self, contract: Contract, kata: object, args: tuple, case_id: str | None = None,
              *, judge: object = None) -> None:
        n = sum(args[0])
        self.calls.append(n)
        if n > LIMIT:
            raise GradeFailure(f"wrong for a sum of {n}")


def drawn_test(monkeypatch: pytest.MonkeyPatch, answer: WrongAboveALimit):
    monkeypatch.setattr(Contract, "check", lambda self, *a, **k: answer.check(self, *a, **k))
    contract = Contract(cases=dict, judge=lambda *a: None, problem="softmax")
    numbers = st.lists(st.integers(0, 1000), min_size=10, max_size=20)
    return contract.example_test("numbers", lambda data: (data.draw(numbers),))


def calls_after_the_first_failure(calls: list[int]) -> int:
    first = next(i for i, n in enumerate(calls) if n > LIMIT)
    return len(calls) - first - 1


def test_shrinking_stops_after_the_budget_and_the_reported_example_still_fails(
        monkeypatch: pytest.MonkeyPatch) -> None:
    answer = WrongAboveALimit()
    test = drawn_test(monkeypatch, answer)
    with pytest.raises(GradeFailure, match=r"wrong for a sum of \d+") as failure:
        test(kata=None)
    # The budget's calls, then hypothesis' last replay of the example it reports: that
    # replay ran the check (a replay that did not fail would be hypothesis' error).
    assert calls_after_the_first_failure(answer.calls) <= SHRINK_CALLS + 1
    assert failure.value.message == f"wrong for a sum of {answer.calls[-1]}"
    assert answer.calls[-1] > LIMIT


def test_without_the_budget_hypothesis_would_shrink_for_longer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: on this test the budget is what ends shrinking."""
    monkeypatch.setattr(strategies, "SHRINK_CALLS", 10**6)
    answer = WrongAboveALimit()
    with pytest.raises(GradeFailure):
        drawn_test(monkeypatch, answer)(kata=None)
    assert calls_after_the_first_failure(answer.calls) > 2 * SHRINK_CALLS


def test_each_run_of_a_drawn_test_has_a_budget_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A grading process may run one check module's tests for several submissions."""
    answer = WrongAboveALimit()
    test = drawn_test(monkeypatch, answer)
    runs = []
    for _ in range(2):
        answer.calls.clear()
        with pytest.raises(GradeFailure):
            test(kata=None)
        runs.append(list(answer.calls))
    assert runs[0] == runs[1]  # the same examples, shrunk as far: deterministic


def test_a_test_failed_as_flaky_for_a_refused_example_runs_again_without_the_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hypothesis fails a test as flaky when an example it ran before is refused: the
    test then runs again without the budget, and fails with the learner's failure,
    not the grader's."""
    from hypothesis.errors import Flaky

    from grader.grading.contracts import contract as contract_module

    # Refusing hypothesis' last replay of the example it reports too, once the
    # budget is spent: the example it saw fail is then refused, which is "flaky".
    monkeypatch.setattr(strategies, "final_replay", lambda: False)
    answer = WrongAboveALimit()
    with pytest.raises(GradeFailure, match=r"wrong for a sum of \d+"):
        drawn_test(monkeypatch, answer)(kata=None)
    # The control: with no second run, the grade would be hypothesis' error.
    monkeypatch.setattr(contract_module, "Flaky", type("NeverRaised", (Exception,), {}))
    with pytest.raises(Flaky):
        drawn_test(monkeypatch, WrongAboveALimit())(kata=None)
