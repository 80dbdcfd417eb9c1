"""The one seam between submissions and checks: the `Kata` of one problem's grade.

A check module (`grader/checks/<slug>/check_<slug>.py`) receives a `Kata` through the
`kata` fixture. `kata.run(...)` calls the learner's method in the worker and
returns its result, turning every way a call can go wrong into a `GradeFailure`
with a message a learner can act on. `kata.reference` is the reference
`Solution`, imported in the grader's own process (it is trusted code). A judge
sees each call as a `Call`.

What a check module grades is declared in grader/grading/contracts/contract.py, which
builds on this seam.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from grader.grading.subject.diagnosis import Diagnoses
from grader.grading.subject.reference import fresh, fresh_args
from grader.grading.values.equality import ErrorText, Outcome, same_outcome, unchanged
from grader.grading.values.failures import (
    BUSY,
    STUCK,
    UNAVAILABLE,
    GradeFailure,
    GraderIntegrityError,
    SubmissionUnavailable,
    changed_its_input,
    returned_its_input,
)
from grader.grading.values.sanitise import learner_error
from grader.grading.values.worker_errors import not_written, one_line, unavailable_kind
from grader.locale import tr
from grader.model import artifacts
from grader.registry import Problem
from grader.sandbox.host.process import CallOutcome, SubmissionProcess
from grader.sandbox.wire.encoding import decode
from grader.sandbox.wire.printed import Printed
from grader.sandbox.worker.harness_ref import (
    harness_name,
    harness_result_fits,
    learners_name,
    run_harness,
)


@dataclass
class Kata:
    problem: Problem
    submission: SubmissionProcess
    reference: Any
    unavailable: str | None = None
    unavailable_kind: str = UNAVAILABLE  # or NOT_IMPLEMENTED (a starter), BUSY (a slow load)
    # A crash or time-out ends the current check: hypothesis would otherwise
    # retry the same hang over and over while it shrinks.
    stuck: str | None = None
    stuck_kind: str = STUCK  # or BUSY: out of time on a busy machine
    outputs: list[Printed] = field(default_factory=list)
    starter: bool = False  # the file is the problem's starter, byte for byte
    last: CallOutcome | None = None  # the worker's record of the latest call
    diagnoses: Diagnoses = field(default_factory=Diagnoses)

    def __repr__(self) -> str:  # shown in hypothesis' failing examples
        return "kata"

    # -- calling the learner's code -------------------------------------------------
    def run(self, method: str, *args: Any, arg_names: tuple[str, ...] = (),
            iterate: bool = False, **kwargs: Any) -> Any:
        outcome = self.outcome(method, *args, arg_names=arg_names, iterate=iterate, **kwargs)
        if outcome[0] == "error":
            raise GradeFailure(tr("{method}() raised {error}", error=outcome[1], method=getattr(
                outcome[1], "raiser", "") or learners_name(method)))
        return outcome[1]

    def outcome(self, method: str, *args: Any, arg_names: tuple[str, ...] = (),
                iterate: bool = False, while_waiting: Callable[[], None] | None = None,
                reference_answer: Callable[[], Any] = lambda: None, returns_new: bool = False,
                **kwargs: Any) -> tuple[str, Any]:
        """Like `outcome_of` for the learner's method, so it can be compared with mistakes.

        A harness's result must be shaped as it returns it before a judge unpacks it: the
        submission beside it in the worker can replace it (harness_ref.RESULTS). Its
        weights are held to the reference's names where `reference_answer` gives them.
        Where the statement asks for a new tensor (`returns_new`), the result must not be
        an input's memory."""
        if self.unavailable:
            raise SubmissionUnavailable(self.unavailable, kind=self.unavailable_kind)
        if self.stuck:
            self._fail_stuck()
        watch = tuple(i for i, a in enumerate(args)
                      if isinstance(a, (torch.Tensor, dict, list, torch.Generator)))
        result = self.submission.call(method, args, kwargs, watch=watch, iterate=iterate,
                                      while_waiting=while_waiting)
        self.last = result
        if result.output:
            self.outputs.append(result.output)
        if result.error is not None:
            return self._error(method, result)
        self._check_inputs_untouched(method, args, result, arg_names)
        if returns_new and result.shared:
            i = result.shared[0]
            name = arg_names[i] if i < len(arg_names) else tr("argument {n}", n=i + 1)
            said = returned_its_input(learners_name(method), name)
            raise GradeFailure(said.text, hint=said.hint)
        harness = harness_name(method)
        if harness and not harness_result_fits(harness, result.result, reference_answer()):
            raise GradeFailure(tr("the result of the grader's {harness} is not shaped as it "
                                  "returns it: the code changed the grader's own code in its "
                                  "process", harness=harness))
        return ("value", result.result)

    def _fail_stuck(self) -> None:
        # One raise site, so hypothesis sees the same failure when it replays.
        raise GradeFailure(self.stuck or "", kind=self.stuck_kind)

    def _error(self, method: str, result: CallOutcome) -> tuple[str, Any]:
        error = learner_error(result.error or {})
        kind = error.get("type")
        if not_written(error) or self.submission.load_error:
            self.unavailable = one_line(error)
            self.unavailable_kind = unavailable_kind(error)
            raise SubmissionUnavailable(self.unavailable, kind=self.unavailable_kind)
        if kind == "WorkerDied":
            self.stuck = f"{learners_name(method)}(): {error.get('message')}"
            self.stuck_kind = BUSY if error.get("busy") is True else STUCK
            self._fail_stuck()
        if kind == "BadResult":
            said = str(error.get("message"))
            # "loss() returned ..." says whose answer it is already; "yielded ..." does not.
            name = learners_name(method)
            raise GradeFailure(said if said.startswith(f"{name}() ") else f"{name}(): {said}")
        if kind == "ParameterNamesError":
            # Every check loads its weights through the same names: one message
            # for the whole problem, not the same one under every check.
            self.unavailable = error.get("message", "")
            self.unavailable_kind = UNAVAILABLE
            raise SubmissionUnavailable(self.unavailable)
        if kind == "KnownWeightsError":
            # The module could not be loaded with the check's weights, so forward()
            # never ran: the message lists what was expected and what was found.
            raise GradeFailure(error.get("message", ""))
        frames = error.get("frames") or []
        # Raised as the module was built, not in forward(): said so, by its __init__.
        built = self.problem.module and frames and " in __init__: " in frames[0]
        return ("error", ErrorText.of(str(kind), error.get("message", ""),
                                      tr("\n  at {frame}", frame=frames[-1]) if frames else "",
                                      f"{self.problem.module}.__init__" if built else ""))

    def _check_inputs_untouched(self, method: str, args: tuple, result: CallOutcome,
                                names: tuple[str, ...]) -> None:
        for i, after in (result.after or {}).items():
            before = args[i]
            if isinstance(before, torch.Generator):
                continue  # a generator's state is meant to change; checks look at it
            if not unchanged(before, after):
                name = names[i] if i < len(names) else tr("argument {n}", n=i + 1)
                said = changed_its_input(learners_name(method), name)
                raise GradeFailure(said.text, hint=said.hint)
        if result.model_changed:
            raise GradeFailure(tr("{method}() changed the model's weights; it must only read "
                                  "them", method=learners_name(method)))

    def compare(self, method: str, *args: Any, arg_names: tuple[str, ...] = (),
                iterate: bool = False, returns_new: bool = False,
                **kwargs: Any) -> tuple[tuple[str, Any], Any]:
        """The learner's outcome and the reference's value for the same call.

        The reference runs here while the worker runs the submission, so the two
        processes share the machine's cores instead of taking turns.
        """
        live: list[Any] = []

        def reference() -> None:
            with torch.no_grad():
                value = self.reference_call(method, args, kwargs)
                live.append(list(value) if iterate else value)

        # A starter's first call runs alone: it only raises NotImplementedError,
        # and the reference's run would be wasted. Any other file's first call
        # does not: the reference's first run (the shipped model's first forward
        # passes) then overlaps the worker's loading. A witnessed call always runs
        # alone: timed against the reference's work, the witness's answers could
        # tell the submission what the reference reads.
        alone = (self.starter and self.submission.calls == 0) or self.submission.witnessed

        def answer() -> Any:
            if not live:
                reference()
            return live[0]

        got = self.outcome(method, *args, arg_names=arg_names,
                           while_waiting=None if alone else reference, iterate=iterate,
                           reference_answer=answer, returns_new=returns_new, **kwargs)
        return got, answer()

    def reference_call(self, method: str, args: tuple, kwargs: dict[str, Any]) -> Any:
        """The reference's answer: its method, or a harness driving the module it is from."""
        fresh_kwargs = {k: fresh(v) for k, v in kwargs.items()}
        if (harness := harness_name(method)) is not None:
            return run_harness(harness, sys.modules[type(self.reference).__module__],
                               *fresh_args(args), **fresh_kwargs)
        return getattr(self.reference, method)(*fresh_args(args), **fresh_kwargs)

    # -- expected values -------------------------------------------------------------
    def golden(self, case_id: str) -> Any:
        """The committed golden output for a fixed case, or None off its platform."""
        if not artifacts.goldens_platform_matches():
            return None
        table = artifacts.load_goldens().get(self.problem.slug, {})
        return decode(table[case_id]) if case_id in table else None

    def expected(self, case_id: str, live: Any,
                 same: Callable[[Outcome, Outcome], bool] = same_outcome) -> Any:
        """The golden value where this platform made the goldens, else the live reference.

        Where both exist they must agree (as `same` judges); if not, the shipped
        reference or model was changed, and no grade from this install can be trusted.
        """
        golden = self.golden(case_id)
        if golden is None:
            return live
        if not same(("value", golden), ("value", live)):
            raise GraderIntegrityError(tr(
                "the reference for {problem}/{case} no longer reproduces the shipped goldens: "
                "solutions/ or data/ were changed; restore them from git",
                problem=self.problem.slug, case=case_id))
        return golden


@dataclass(frozen=True)
class Call:
    """One call of the learner's method, as a judge or a diagnosis sees it."""

    method: str
    args: tuple  # as the check built them: models are ModelSpecs, see reference.fresh
    named: dict[str, Any]  # every parameter by name, defaults filled in
    outcome: Outcome
    record: CallOutcome  # the worker's: the arguments after the call, the model's calls
    case_id: str | None = None  # None for a drawn example
    # Calls the learner's method again on other arguments, for a diagnosis that one
    # call cannot settle; None where the call cannot be repeated. It raises
    # GradeFailure if that call goes wrong in the worker.
    again: Callable[..., Outcome] | None = field(default=None, compare=False, repr=False)


# judge(got, expected, call) raises GradeFailure when `got` is wrong.
Judge = Callable[[Any, Any, Call], None]
