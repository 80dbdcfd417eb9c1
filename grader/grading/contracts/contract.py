"""What a check module grades, declared once; the checks and tests built from it.

Every grader/checks/<slug>/check_<slug>.py declares one contract, with only what is new
about its problem:

    CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES)

Its problem is the one whose check module declares it, handed to the module as
it loads (grader/grading/contracts/declaring.py),
its method that problem's only method, its argument names the reference
method's parameters and whether it yields (`iterate`) what the reference does.
Any of them may be declared instead: a problem of several methods names the one
each contract grades, and a contract driven by a harness may grade something
that is not a method at all (its arg_names are then the harness's). The module
then gets the check of one call (`CONTRACT.check`), its two usual tests
(`CONTRACT.tests`: the fixed cases against the goldens, drawn examples against
the reference; or one at a time, `case_test` and `example_test`) and the tests
that bad arguments are refused (`CONTRACT.refusal_test`, of the arguments its
`refusals` declare as its `cases` declare theirs, so that a learners' copy stores
them too). A module writes only what is new about its problem.

The vocabulary: a *case* is a named set of arguments fixed in the module; the
reference's outputs for the cases are the goldens (data/goldens.json, keyed by
problem and case id). An *example* is a set of arguments hypothesis draws. A
*judge* decides whether the learner's answer is right; a *mistake* is a known
wrong answer, named when the learner's answer equals it.

What the registry and the reference say is read in
grader/grading/contracts/contract_derivation.py. The grader validates each contract when
it collects the module (grader/grading/contracts/contract_validation.py), so a slug,
method or argument name that does not fit the registry or the reference stops
grading with a clear error instead of grading the wrong thing.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial, wraps
from typing import Any

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from grader.grading.contracts.contract_derivation import derive
from grader.grading.contracts.declaring import DECLARING
from grader.grading.judging.any_result import expect_error
from grader.grading.subject.diagnosis import name_mistake
from grader.grading.subject.inputs import answer_of, describe_inputs, inputs_of, show_inputs
from grader.grading.subject.kata import Call, Judge, Kata
from grader.grading.subject.reference import fresh_args
from grader.grading.subject.strategies import GRADING, ShrinkBudget, seeded
from grader.grading.values.equality import Outcome, outcome_of, raised, same_outcome
from grader.grading.values.failures import (
    Diagnosis,
    GradeFailure,
    GraderIntegrityError,
    Mistake,
    SubmissionUnavailable,
)
from grader.locale import tr, translated
from grader.sandbox.host.process import CallOutcome
from grader.sandbox.worker.harness_ref import harness_ref, run_harness

# The arguments of one example, drawn with a label for each part (the labels
# name the parts of the smallest failing input in the learner's report).
Draw = Callable[[st.DataObject], tuple]


@dataclass(frozen=True)
class Drawing:
    """What one of a contract's drawn tests draws with, for what draws its examples
    again without grading them (the release, grader.maintainer.mistake_reach)."""

    contract: Contract
    draw: Draw
    judge: Judge | None  # its own judge, if not the contract's
    identity: str  # what its examples are seeded from (strategies.seeded)


def drawings(module: Any, contract: Contract) -> list[Drawing]:
    """The drawings of `contract`'s drawn tests in the check module `module`."""
    return [value.drawing for name, value in sorted(vars(module).items())
            if name.startswith("test_") and isinstance(getattr(value, "drawing", None), Drawing)
            and value.drawing.contract is contract]


@dataclass(frozen=True)
class Refusal:
    """Arguments the reference refuses: the learner's method must raise ValueError too.

    `what` shows the call in the message and `why` (given with `marked`, translated
    where it is shown) says why it cannot return a value; what the error says is the
    learner's own. `mistakes` are the ways of returning a value instead that can be
    named (the contract's own are for answers to valid arguments).
    """

    args: tuple
    what: str
    why: str
    mistakes: Sequence[Mistake] = ()


def refusals_of(values: Sequence[Any], args: Callable[[Any], tuple], what: str, why: str,
                mistakes: Sequence[Mistake] = ()) -> Callable[[], dict[str, Refusal]]:
    """A contract's `refusals`: one argument's values, each refused, by the value as its
    id; `args(value)` gives the call's arguments and `what` shows it, `{}` the value."""
    return lambda: {str(value): Refusal(args(value), what.format(value), why, mistakes)
                    for value in values}


@dataclass(frozen=True, kw_only=True)
class Contract:
    """What a check module grades: one method of one problem, its cases and its mistakes."""

    cases: Callable[[], dict[str, tuple]]  # case id -> arguments
    judge: Judge
    # Arguments the method must refuse: refusal id -> Refusal (refusal_test tests them).
    refusals: Callable[[], dict[str, Refusal]] | None = None
    # By default the problem whose checks file declares the contract, its only
    # method, and that method's parameters as the reference names them.
    problem: str = ""  # the slug in problems/registry.toml
    method: str = ""  # one of that problem's `methods`
    arg_names: tuple[str, ...] = ()
    mistakes: Sequence[Mistake] = ()
    # When the learner's outcome "is" a mistake's. Filters keep tied tokens in
    # any order, so they compare otherwise than bit for bit.
    matches: Callable[[Outcome, Outcome], bool] = same_outcome
    # When the live reference agrees with a golden recorded on the goldens'
    # platform; module outputs carry rounding errors of the tensor's scale.
    same_as_golden: Callable[[Outcome, Outcome], bool] = same_outcome
    # A diagnosis for wrong answers that no mistake reproduces, e.g. from the
    # error a call raised.
    fallback_hint: Callable[[Call], Diagnosis | str] | None = None
    # Where one case's answer can fit several mistakes (on a prompt shorter than the
    # window, reading the first position and a softmax over the batch write the same
    # text), the learner's answers to the other cases decide which is named. It runs
    # every mistake, not only up to the first that fits, and calls the learner's method
    # on each case: a train loop's failing grade took 38 s with it, 16 s without.
    tell_apart_on_cases: bool = False
    # With tell_apart_on_cases, inputs that no check judges, whose answers join the
    # cases' to tell apart what the cases cannot: a generation on a model whose window
    # is not the shipped one's 48 (grader/grading/subject/cases.py's other_window_cases).
    telling: Callable[[], dict[str, tuple]] | None = None
    # The method yields: its answer is the list of what it yields. By default,
    # whether the reference's yields.
    iterate: bool | None = None
    # The checks judge how the model is used, so its calls must be observed by the
    # grader, out of the submission's reach (grader/sandbox/host/witness.py).
    witness_model_calls: bool = False
    # The method is driven by trusted code, the function of that name in
    # grader/sandbox/worker/harnesses.py, given the module and a case's arguments: in the
    # worker for the submission, here for the reference.
    harness: str = ""
    # Whether the cases have goldens. A result that float rounding on another
    # machine can move beyond the tolerances (the weights after several training
    # steps) is judged against the live reference only.
    goldens: bool = True
    # The judge is given the calls that raised too (as `call.outcome`), to say
    # what an error means; otherwise the contract reports it as raised.
    judges_errors: bool = False
    # The statement asks for a new tensor: the result must not be an input's memory (a
    # filter that returns its logits where it removes nothing).
    returns_new: bool = False
    # The lines that show a failing call's arguments, by name.
    describe: Callable[[dict[str, Any]], list[str]] = describe_inputs

    def __post_init__(self) -> None:
        if self.telling and not self.tell_apart_on_cases:
            raise ValueError("a contract's telling inputs are read only with "
                             "tell_apart_on_cases=True")
        # What the registry and the reference already say is not declared again.
        derived = derive(self.problem or DECLARING.get(), self.method)
        for name, value in zip(("problem", "method"), derived[:2]):
            object.__setattr__(self, name, value)
        signature = derived[2]
        if signature is None:  # no method of the registry's: nothing to derive from
            object.__setattr__(self, "iterate", bool(self.iterate))
            return
        if not self.arg_names:
            object.__setattr__(self, "arg_names", signature.names)
        if self.iterate is None:
            object.__setattr__(self, "iterate", signature.yields)

    @cached_property
    def case_args(self) -> dict[str, tuple]:
        """The cases, built once: most run the shipped model, and checks only read them."""
        return self.cases()

    @cached_property
    def refused(self) -> dict[str, Refusal]:
        """The refusals, built once, as the cases are."""
        return self.refusals() if self.refusals else {}

    # -- checking one call ---------------------------------------------------------------
    def check(self, kata: Kata, args: tuple, case_id: str | None = None, *,
              judge: Judge | None = None) -> Call:
        """Call the learner's method and the reference on `args`, and judge the answer.

        A case is judged against its golden; an example against the live
        reference. On failure the message names the mistake the learner's answer
        reproduces, if any; that diagnosis runs only when the message is read.
        """
        before = kata.last
        try:
            got, live = kata.compare(self.called, *args, arg_names=self.arg_names,
                                     iterate=self.iterate, returns_new=self.returns_new)
        except SubmissionUnavailable:
            raise
        except GradeFailure as failure:  # a crash, a bad reply, an input changed in place
            if failure.inputs is None:
                self.locate(failure, self.bind(kata, args), case_id)
            if failure.output is None and kata.last is not before and kata.last is not None:
                failure.output = kata.last.output
            raise
        call = Call(self.method, args, self.bind(kata, args), got, self.record(kata), case_id,
                    again=partial(self.call_again, kata))
        expected = (kata.expected(case_id, live, self.same_as_golden)
                    if case_id and self.goldens else live)
        try:
            if got[0] == "error" and not self.judges_errors:
                raise GradeFailure(raised(self.method, got))
            (judge or self.judge)(got[1], expected, call)
        except GradeFailure as failure:
            message, hint, inner = failure.message, failure.hint, failure.explain
            self.remember(kata, call, judge, right=False)
        else:
            self.remember(kata, call, judge, right=True)
            return call
        # Raised outside the except block, so every wrong answer fails at this one
        # line: hypothesis then sees one failure to shrink, not one per message.
        wrong = GradeFailure(message, lambda: (inner() if inner else "")
                             + self.diagnose(kata, call, ("value", expected)), hint=hint)
        self.locate(wrong, call.named, call.case_id)
        wrong.got, wrong.output = answer_of(call.outcome), call.record.output
        raise wrong

    def remember(self, kata: Kata, call: Call, judge: Judge | None, *, right: bool) -> None:
        """Keep the learner's answer to a fixed case, as its own judge found it, for the
        diagnoses of later failures (`seen`)."""
        if call.case_id is not None and judge is None:
            kata.diagnoses.seen.setdefault(self.called, []).append(
                (call.case_id, call.args, call.outcome, right))

    def diagnose(self, kata: Kata, call: Call, expected: Outcome) -> Diagnosis | str:
        seen = kata.diagnoses.seen.get(self.called, [])
        named = name_mistake(call.outcome, self.mistakes, call.args, self.matches, expected,
                             kata.diagnoses,
                             partial(self.elsewhere, kata, call) if self.tell_apart_on_cases
                             else None,
                             seen=lambda: [(args, got, right) for case_id, args, got, right
                                           in seen if case_id != call.case_id],
                             weak=call.case_id is None or call.outcome[0] == "error")
        if named or not self.fallback_hint:
            return named
        return self.fallback_hint(call)

    def elsewhere(self, kata: Kata, call: Call) -> list[tuple[tuple, Outcome, bool]]:
        """The learner's outcomes on the other cases, and whether each is right, for a
        call whose answer fits a mistake: what one call cannot tell apart, the cases
        can. They are asked for once a grade: the learner's answers do not change."""
        if call.again is None:
            return []
        answers = kata.diagnoses.answers.get(self.called)
        if answers is None:
            answers = []
            told = self.telling() if self.telling else {}
            for case_id, args in {**self.case_args, **told}.items():
                try:
                    got = call.again(*args)
                except GradeFailure:
                    break  # the call went wrong in the worker: what was seen so far stands
                with torch.no_grad():
                    live = kata.reference_call(self.called, args, {})
                    live = list(live) if self.iterate else live
                answers.append((case_id, args, got, self.matches(got, ("value", live))))
            kata.diagnoses.answers[self.called] = answers
        return [(args, got, right) for case_id, args, got, right in answers
                if case_id != call.case_id]

    @property
    def called(self) -> str:
        """What the worker is asked to run: the method, or the harness that drives it."""
        return harness_ref(self.harness) if self.harness else self.method

    def locate(self, failure: GradeFailure, named: dict[str, Any], case_id: str | None) -> None:
        """Give `failure` the failing call's arguments (`named`), as the learner's method
        received them, and the case they are of."""
        failure.inputs = show_inputs(self.describe(named), case_id)
        failure.arguments, failure.case_id = inputs_of(named), case_id

    def call_again(self, kata: Kata, *args: Any) -> Outcome:
        """The learner's outcome on other arguments, leaving the failing call's record
        (what it printed, what it changed) as the report will show it."""
        last, outputs = kata.last, list(kata.outputs)
        try:
            return kata.outcome(self.called, *args, arg_names=self.arg_names,
                                iterate=self.iterate)
        finally:
            kata.last, kata.outputs[:] = last, outputs

    @staticmethod
    def record(kata: Kata) -> CallOutcome:
        assert kata.last is not None, "the worker records every call"
        return kata.last

    def bind(self, kata: Kata, args: tuple) -> dict[str, Any]:
        method = getattr(kata.reference, self.method, None)
        signature = inspect.signature(method) if method is not None else None
        if signature is None or (any(p.kind is p.VAR_POSITIONAL
                                     for p in signature.parameters.values())
                                 and len(args) == len(self.arg_names)):
            # A module's driver takes forward(config, weights, *inputs), and a harness
            # may drive what is no method: the contract's names say what each input is.
            return dict(zip(self.arg_names, args, strict=True))
        bound = signature.bind(*args)
        bound.apply_defaults()
        return dict(bound.arguments)

    def reference_answers(self, reference: Any) -> dict[str, Any]:
        """The reference's answer to every case: what the goldens record."""
        if not self.goldens:
            return {}
        method = getattr(reference, self.method)
        if self.harness:
            module = sys.modules[type(reference).__module__]
            method = partial(run_harness, self.harness, module)
        answers = {}
        with torch.no_grad():
            for case_id, args in self.case_args.items():
                answer = method(*fresh_args(args))
                answers[case_id] = list(answer) if self.iterate else answer
        return answers

    def expect_refusal(self, kata: Kata, refusal: Refusal) -> None:
        """The learner's method must raise ValueError, with a message, where the
        reference does."""
        reference = getattr(kata.reference, self.method)

        def run_reference() -> Any:
            answer = reference(*fresh_args(refusal.args))
            return list(answer) if self.iterate else answer

        if outcome_of(run_reference)[0] != "error":
            raise GraderIntegrityError(tr("the reference {method}() accepts {what}, which a "
                                          "check expects it to refuse", method=self.method,
                                          what=refusal.what))
        got = kata.outcome(self.method, *refusal.args, arg_names=self.arg_names,
                           iterate=self.iterate)
        if got[0] == "value":
            raise GradeFailure(tr("{what} returned a value instead of raising ValueError: {why}",
                                  what=refusal.what, why=translated(refusal.why)),
                               lambda: name_mistake(got, refusal.mistakes, refusal.args,
                                                    self.matches, memory=kata.diagnoses))
        expect_error(got, "ValueError", refusal.what, self.method)

    # -- tests ---------------------------------------------------------------------------
    # The report names a test by its docstring's first line (and a case by its id),
    # so each test is given its description as its docstring.
    def tests(self, cases: str, examples: str,
              draw: Draw) -> tuple[Callable[..., None], Callable[..., None]]:
        """The two tests every check module has: its cases, and drawn examples."""
        return self.case_test(cases), self.example_test(examples, draw)

    def refusal_test(self, description: str, *ids: str) -> Callable[..., None]:
        """A test that the learner's method refuses the refusals `ids` (every one the
        contract declares, if none is named): one test, parametrized where they are
        several."""
        if len(ids) == 1:
            def test(kata: Kata) -> None:
                self.expect_refusal(kata, self.refused[ids[0]])

            test.__doc__ = description
            return test

        def test_each(kata: Kata, refusal: str) -> None:
            self.expect_refusal(kata, self.refused[refusal])

        test_each.__doc__ = description
        return pytest.mark.parametrize("refusal", list(ids or self.refused))(test_each)

    def case_test(self, description: str) -> Callable[..., None]:
        """A test of each case, against its golden."""

        def test(kata: Kata, case_id: str) -> None:
            self.check(kata, self.case_args[case_id], case_id)

        test.__doc__ = description
        return pytest.mark.parametrize("case_id", list(self.case_args))(test)

    def example_test(self, description: str, draw: Draw,
                     judge: Judge | None = None) -> Callable[..., None]:
        """A test of examples drawn by `draw`, against the reference (judged by
        `judge` instead of the contract's own, if given)."""

        budget = ShrinkBudget()

        def test(kata: Kata, data: st.DataObject) -> None:
            args = draw(data)
            budget.spend()
            try:
                self.check(kata, args, judge=judge)
            except BaseException:
                budget.failed()
                raise

        test.__doc__ = description  # before hypothesis wraps it: the wrapper copies it then
        identity = f"{self.problem}\0{description}"
        drawn = seeded(GRADING(given(data=st.data())(test)), identity)

        # Each grade runs the test afresh, with a budget of its own. The wrapper takes
        # the drawn test's name, signature and attributes (hypothesis' own among them).
        @wraps(drawn)
        def run(kata: Kata) -> None:
            budget.start()
            try:
                drawn(kata)
            except Flaky:
                if not budget.rejected:
                    raise
                budget.start(limited=False)  # see ShrinkBudget.rejected
                drawn(kata)

        run.drawing = Drawing(self, draw, judge, identity)  # type: ignore[attr-defined]
        return run
