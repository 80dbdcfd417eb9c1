"""The one seam between submissions and checks.

A check module (`grader/checks/check_<slug>.py`) receives a `Kata` through the
`kata` fixture. `kata.run(...)` calls the learner's method in the worker and
returns its result, turning every way a call can go wrong into a `GradeFailure`
with a message a learner can act on. `kata.reference` is the reference
`Solution`, imported in the grader's own process (it is trusted code).

What a check module grades is declared in grader/grading/contract.py, which
builds on this seam.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from grader.grading.failures import (
    NOT_IMPLEMENTED,
    STUCK,
    UNAVAILABLE,
    WRONG,
    Diagnosis,
    Mistake,
    as_diagnosis,
    naming,
)
from grader.grading.sanitise import learner_error
from grader.model import artifacts
from grader.model.memo import remember_outputs
from grader.registry import Problem
from grader.sandbox.process import CallOutcome, SubmissionProcess
from grader.sandbox.protocol import ModelSpec, decode

# Tolerances, defined once. Float results are compared with these; each check
# that needs another says why.
RTOL = 1e-5  # float32 carries ~7 digits; a different order of operations moves the last two
ATOL = 1e-6  # for entries near zero, where a relative bound means nothing
TIE_RTOL = 1e-5  # two sampling scores this close are the same score in float32 rounding
# A probability from a cached forward pass against the same window read afresh: the
# same sums in another order move it by about 1e-7; a key from an old position, by
# far more than this.
CACHE_ATOL = 1e-4
# Activations (what the model's parts output) are sums of many terms as large
# as the tensor's typical entry, so an entry near zero still carries their
# rounding error: their absolute tolerance is RTOL times the tensor's root mean
# square, not ATOL (grader/grading/judges.py: expect_activations).
# The weights after a few AdamW steps. Adam divides each gradient by its own
# running size, so an entry near zero, computed in another order, can move its
# weight by a fraction of the learning rate (lr / eps times its rounding error,
# at worst). Between equivalent training steps of small GPTs (three styles, 800
# drawn examples) we measured up to 2e-2 times the rate: 2e-4 at lr 1e-2, the
# largest rate the checks use. A tenth of that rate is allowed, five times the
# worst seen. Forgetting zero_grad() moves weights by half the rate or more; the
# losses, which keep RTOL and ATOL, catch such mistakes at lower rates too.
TRAINED_WEIGHTS_ATOL = 1e-3


class GradeFailure(AssertionError):
    """A check failed; the message is for the learner, not a traceback.

    `hint` is the fix the message offers, kept apart from it (`gpt-kata hint`
    shows it). `explain`, if given, adds the diagnosis of a known mistake (a
    Diagnosis, or plain text). It runs only when the failure is read:
    hypothesis raises many failures while it shrinks an example, and only the
    last one is shown. `kind` says what kind of failure it is (grading/failures.py).
    """

    kind = WRONG

    def __init__(self, message: str,
                 explain: Callable[[], Diagnosis | str] | None = None, *,
                 hint: str = "", kind: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.explain = explain
        self.hint = hint
        if kind is not None:
            self.kind = kind
        self._diagnosis: Diagnosis | None = None
        # Set by the contract for the call that failed: its arguments, shown in the
        # learner's terms (so hypothesis' own notes are not needed), and what it printed.
        self.inputs: str | None = None
        self.case_id: str | None = None  # the fixed case whose inputs `inputs` shows
        self.output: str | None = None

    @property
    def diagnosis(self) -> Diagnosis:
        """The message, its fix and what `explain` adds, piece by piece."""
        if self._diagnosis is None:
            extra = as_diagnosis(self.explain()) if self.explain else Diagnosis()
            self._diagnosis = Diagnosis.of(self.message, self.hint) + extra
        return self._diagnosis

    def __str__(self) -> str:
        return self.diagnosis.whole


Outcome = tuple[str, Any]  # ("value", result) or ("error", "Type: message")


class ErrorText(str):
    """An error as "Type: message", comparable across attempts; `.where` says where."""

    where: str = ""


def raised(method: str, got: tuple[str, Any]) -> str:
    return f"{method}() raised {got[1]}{getattr(got[1], 'where', '')}"


class SubmissionUnavailable(GradeFailure):
    """The submission cannot be graded at all (syntax error, starter, crash on load)."""

    kind = UNAVAILABLE


def outcome_of(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[str, Any]:
    """("value", result) or ("error", "Type: message"), to compare two attempts."""
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - a variant's failure is an outcome to compare
        return ("error", f"{type(exc).__name__}: {exc}")


def same_outcome(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    return a[0] == b[0] and _same_value(a[1], b[1])


def _same_value(x: Any, y: Any) -> bool:
    if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
        return (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)
                and x.shape == y.shape and x.dtype == y.dtype
                and torch.allclose(x.double(), y.double(), rtol=RTOL, atol=ATOL, equal_nan=True))
    # A pair of tensors (an input window and its target) is compared item by item:
    # `==` on tuples of tensors would ask a many-valued tensor for its truth.
    if isinstance(x, (list, tuple)) and type(x) is type(y):
        return len(x) == len(y) and all(_same_value(p, q) for p, q in zip(x, y))
    # Weights by name, after a training step: likewise, entry by entry.
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same_value(x[k], y[k]) for k in x)
    return x == y


def where(error: dict) -> str:
    file, line = error.get("file"), error.get("line")
    if file and line:
        return f"{Path(file).name}:{line}: "
    if file:
        return f"{Path(file).name}: "
    return ""


def one_line(error: dict) -> str:
    """A learner's error in one plain line, with file and line."""
    error = learner_error(error)
    kind, message = error.get("type", "Error"), error.get("message", "")
    if kind == "NotImplementedError":
        return f"{where(error)}not implemented yet (the starter still raises NotImplementedError)"
    if kind == "SyntaxError":
        return f"{where(error)}SyntaxError: {message}"
    if kind in ("MissingClass", "MissingMethod", "LoadFailed", "WorkerDied", "BadResult"):
        return f"{where(error)}{message}"
    return f"{where(error)}{kind}: {message}".rstrip(": ")


def unavailable_kind(error: dict) -> str:
    """Whether an error that stops a whole problem is the starter's or a real failure."""
    kind = learner_error(error).get("type")
    return NOT_IMPLEMENTED if kind == "NotImplementedError" else UNAVAILABLE


def load_reference(problem: Problem) -> Any:
    spec = importlib.util.spec_from_file_location(
        f"gpt_kata_reference_{problem.slug.replace('-', '_')}", problem.reference
    )
    assert spec and spec.loader, problem.reference
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # so its classes and helpers can be found by name
    spec.loader.exec_module(module)
    if problem.module:
        from grader.model.parts import ModuleDriver

        return ModuleDriver(getattr(module, problem.module))
    return module.Solution()


def fresh(value: Any) -> Any:
    """An argument as the grader's own object, for a call made in this process.

    A ModelSpec becomes its model (shared and only read: models are cached); a
    tensor, dict or generator is copied, so that the reference or a mistake run
    here cannot change what another call sees.
    """
    if isinstance(value, ModelSpec):
        return remember_outputs(artifacts.build_model(value))
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, torch.Generator):
        copy = torch.Generator()
        copy.set_state(value.get_state())
        return copy
    return value


def fresh_args(args: Iterable[Any]) -> list[Any]:
    return [fresh(a) for a in args]


@dataclass
class Diagnoses:
    """What the diagnoses of one problem's failures have found so far.

    A small input can fit two mistakes at once (with n = 1, say, several
    off-by-ones ban the same tokens), and the smallest input hypothesis finds
    often is one. So that one bug gets one name in every check, a mistake
    already named for this submission is tried first, and one that an earlier
    failure showed the learner is not making is tried last.
    """

    named: list[str] = field(default_factory=list)
    ruled_out: set[str] = field(default_factory=set)

    def order(self, mistakes: Sequence[Mistake]) -> list[Mistake]:
        def rank(mistake: Mistake) -> int:
            if mistake.name in self.named:
                return 0
            return 2 if mistake.name in self.ruled_out else 1
        return sorted(mistakes, key=rank)  # stable: otherwise in the check's own order


def run_harness(method: str, module: Any, args: Sequence[Any],
                kwargs: dict[str, Any] | None = None) -> Any:
    """"harness:<name>" of grader/sandbox/harnesses.py on `module`, here in the grader
    (the same code the worker runs on the submission)."""
    from grader.sandbox import harnesses

    return getattr(harnesses, method.removeprefix("harness:"))(module, *args, **(kwargs or {}))


def find_mistake(got: tuple[str, Any], mistakes: Sequence[Mistake], args: tuple,
                 matches: Callable[[tuple[str, Any], tuple[str, Any]], bool] = same_outcome,
                 expected: tuple[str, Any] | None = None,
                 memory: Diagnoses | None = None) -> Mistake | None:
    """The known mistake whose outcome on `args` matches the learner's, if any.

    A mistake that gives the `expected` outcome on these arguments is no
    explanation of a failure, whatever else failed (a stream that was not
    streamed, say), so it is passed over.
    """
    memory = memory if memory is not None else Diagnoses()
    for mistake in memory.order(mistakes):
        silent = False  # a way of making it that these arguments cannot show
        for run in mistake.runs:
            outcome = outcome_of(run, *fresh_args(args))
            if expected and same_outcome(expected, outcome):
                silent = True
            elif matches(got, outcome):
                if mistake.name not in memory.named:
                    memory.named.append(mistake.name)
                return mistake
            elif outcome[0] == "error" or outcome[1] is None:
                silent = True  # this way of making it does not apply to these arguments
        if not silent:
            memory.ruled_out.add(mistake.name)
    return None


def name_mistake(got: tuple[str, Any], mistakes: Sequence[Mistake], args: tuple,
                 matches: Callable[[tuple[str, Any], tuple[str, Any]], bool] = same_outcome,
                 expected: tuple[str, Any] | None = None,
                 memory: Diagnoses | None = None) -> Diagnosis:
    """The diagnosis naming the mistake `find_mistake` finds, if any."""
    mistake = find_mistake(got, mistakes, args, matches, expected, memory)
    return naming(mistake) if mistake else Diagnosis()


@dataclass
class Kata:
    problem: Problem
    submission: SubmissionProcess
    reference: Any
    unavailable: str | None = None
    unavailable_kind: str = UNAVAILABLE  # or NOT_IMPLEMENTED, for a starter
    # A crash or time-out ends the current check: hypothesis would otherwise
    # retry the same hang over and over while it shrinks.
    stuck: str | None = None
    outputs: list[str] = field(default_factory=list)
    last: CallOutcome | None = None  # the worker's record of the latest call
    diagnoses: Diagnoses = field(default_factory=Diagnoses)

    def __repr__(self) -> str:  # shown in hypothesis' failing examples
        return "kata"

    # -- calling the learner's code -------------------------------------------------
    def run(self, method: str, *args: Any, arg_names: tuple[str, ...] = (),
            iterate: bool = False, **kwargs: Any) -> Any:
        outcome = self.outcome(method, *args, arg_names=arg_names, iterate=iterate, **kwargs)
        if outcome[0] == "error":
            raise GradeFailure(f"{method}() raised {outcome[1]}")
        return outcome[1]

    def outcome(self, method: str, *args: Any, arg_names: tuple[str, ...] = (),
                iterate: bool = False, while_waiting: Callable[[], None] | None = None,
                **kwargs: Any) -> tuple[str, Any]:
        """Like `outcome_of` for the learner's method, so it can be compared with mistakes."""
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
        return ("value", result.result)

    def _fail_stuck(self) -> None:
        # One raise site, so hypothesis sees the same failure when it replays.
        raise GradeFailure(self.stuck or "", kind=STUCK)

    def _error(self, method: str, result: CallOutcome) -> tuple[str, Any]:
        error = learner_error(result.error or {})
        kind = error.get("type")
        if kind == "NotImplementedError" or self.submission.load_error:
            self.unavailable = one_line(error)
            self.unavailable_kind = unavailable_kind(error)
            raise SubmissionUnavailable(self.unavailable, kind=self.unavailable_kind)
        if kind == "WorkerDied":
            self.stuck = f"{method}(): {error.get('message')}"
            self._fail_stuck()
        if kind == "BadResult":
            raise GradeFailure(f"{method}(): {error.get('message')}")
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
        text = ErrorText(f"{kind}: {error.get('message', '')}")
        text.where = f"\n  at {frames[-1]}" if frames else ""
        return ("error", text)

    def _check_inputs_untouched(self, method: str, args: tuple, result: CallOutcome,
                                names: tuple[str, ...]) -> None:
        for i, after in (result.after or {}).items():
            before = args[i]
            if isinstance(before, torch.Generator):
                continue  # a generator's state is meant to change; checks look at it
            if not _equal(before, after):
                name = names[i] if i < len(names) else f"argument {i + 1}"
                raise GradeFailure(
                    f"{method}() changed its input `{name}` in place, and the caller still "
                    "needs it as it was.",
                    hint="work on a copy (.clone()) or build a new tensor")
        if result.model_changed:
            raise GradeFailure(f"{method}() changed the model's weights; it must only read them")

    def compare(self, method: str, *args: Any, arg_names: tuple[str, ...] = (),
                iterate: bool = False, **kwargs: Any) -> tuple[tuple[str, Any], Any]:
        """The learner's outcome and the reference's value for the same call.

        The reference runs here while the worker runs the submission, so the two
        processes share the machine's cores instead of taking turns.
        """
        live: list[Any] = []

        def reference() -> None:
            with torch.no_grad():
                value = self.reference_call(method, args, kwargs)
                live.append(list(value) if iterate else value)

        # The first call of a submission runs alone: if it only raises
        # NotImplementedError (a starter), the reference's run would be wasted.
        # A witnessed call always does: timed against the reference's work, the
        # witness's answers could tell the submission what the reference reads.
        alone = self.submission.calls == 0 or self.submission.witnessed
        got = self.outcome(method, *args, arg_names=arg_names,
                           while_waiting=None if alone else reference, iterate=iterate,
                           **kwargs)
        if not live:
            reference()
        return got, live[0]

    def reference_call(self, method: str, args: tuple, kwargs: dict[str, Any]) -> Any:
        """The reference's answer: its method, or a harness driving the module it is from."""
        fresh_kwargs = {k: fresh(v) for k, v in kwargs.items()}
        if method.startswith("harness:"):
            return run_harness(method, sys.modules[type(self.reference).__module__],
                               fresh_args(args), fresh_kwargs)
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
            raise GraderIntegrityError(
                f"the reference for {self.problem.slug}/{case_id} no longer reproduces the "
                "shipped goldens: solutions/ or data/ were changed; restore them from git"
            )
        return golden


@dataclass(frozen=True)
class Call:
    """One call of the learner's method, as a judge or a diagnosis sees it."""

    method: str
    args: tuple  # as the check built them: models are ModelSpecs, see skeleton.fresh
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


class GraderIntegrityError(Exception):
    """The grader's own inputs are broken: an error, never a learner's failure."""


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and bool(torch.equal(a, b) or torch.equal(a.isnan(), b.isnan())
                         and torch.equal(a.nan_to_num(), b.nan_to_num())))
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_equal(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(_equal(a[k], b[k]) for k in a))
    return a == b
