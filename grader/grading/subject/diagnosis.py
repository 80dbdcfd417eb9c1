"""Naming the known mistake a wrong answer is: each mistake is run on the failing
call's arguments, and one whose outcome is the learner's is named."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from grader.grading.subject.reference import fresh_args
from grader.grading.values.equality import Outcome, outcome_of, same_outcome
from grader.grading.values.failures import Diagnosis, Mistake, naming


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
    # Mistakes named over look-alikes that fitted the same call, by the learner's
    # answers to the other cases. Those answers do not change, so one of these that
    # fits a later call first is named again without running the rest.
    told_apart: set[str] = field(default_factory=set)
    # Mistakes the learner's answers to other cases refute: right where the mistake
    # would have been wrong. A call that such a mistake fits fits it by coincidence
    # (on four equal logits, filling with 0 gives the input back, as keeping all does).
    refuted: set[str] = field(default_factory=set)
    # The learner's answers to a contract's cases, by what it calls: (case id,
    # arguments, outcome, whether it is right), asked for once a grade.
    answers: dict[str, list[tuple[str, tuple, Outcome, bool]]] = field(default_factory=dict)
    # The same, as the contract's checks of its fixed cases graded them (nothing asked
    # again), for contracts that do not tell mistakes apart on every case.
    seen: dict[str, list[tuple[str, tuple, Outcome, bool]]] = field(default_factory=dict)

    def order(self, mistakes: Sequence[Mistake]) -> list[Mistake]:
        def rank(mistake: Mistake) -> int:
            if mistake.name in self.named:
                return 0
            return 2 if mistake.name in self.ruled_out else 1
        return sorted(mistakes, key=rank)  # stable: otherwise in the check's own order


# The learner's outcomes on other arguments than the failing call's: (arguments,
# outcome, whether it is the right answer there), asked for only where a call fits a
# mistake.
Elsewhere = Callable[[], Sequence[tuple[tuple, Outcome, bool]]]


def find_mistake(got: Outcome, mistakes: Sequence[Mistake], args: tuple,
                 matches: Callable[[Outcome, Outcome], bool] = same_outcome,
                 expected: Outcome | None = None,
                 memory: Diagnoses | None = None,
                 elsewhere: Elsewhere | None = None, *,
                 seen: Elsewhere | None = None, weak: bool = False) -> Mistake | None:
    """The known mistake whose outcome on `args` matches the learner's, if any.

    A mistake that gives the `expected` outcome on these arguments is no
    explanation of a failure, whatever else failed (a stream that was not
    streamed, say), so it is passed over.

    Where `elsewhere` gives the learner's outcomes on other arguments, they decide:
    - a mistake the learner answers right where it would have been wrong is not
      named: it fitted this call by coincidence;
    - where several mistakes fit these arguments (on a prompt shorter than the
      window, reading the first position and a softmax over the batch give the
      same text), the first that also fits the other outcomes is named: the
      evidence of one call alone would name whichever comes first, and a later
      check then another name for the same bug.
    A mistake told apart so once, and the first to fit a later call, is named
    there at once: the other cases would say the same again.

    Where `seen` gives the learner's answers to the cases graded so far (what they
    answered anyway: nothing is called again), a mistake that fits is passed over
    where a right answer there refutes it. Where one call's evidence is `weak`, a
    mistake is named only if it gives the learner's answers elsewhere too, wrong ones
    included: on an example hypothesis shrank, often so small that several mistakes
    give the same answer (a reversed vocabulary of two characters is one counted from
    1), and on an error, whose type is all that is compared (a window refused where an
    off-by-one refuses it, by code that refuses most windows).
    """
    memory = memory if memory is not None else Diagnoses()
    evidence: list[tuple[tuple, Outcome]] | None = None
    fitting: list[Mistake] = []
    for mistake in memory.order(mistakes):
        if elsewhere is not None and mistake.name in memory.refuted:
            continue
        silent = False  # a way of making it that these arguments cannot show
        fits = False
        for run in mistake.runs:
            outcome = outcome_of(run, *fresh_args(args))
            if expected and same_outcome(expected, outcome):
                silent = True
            elif nothing_but_nan(outcome):
                # A mean of nothing, say: nan is every broken computation's answer, so
                # the learner's nan is no evidence of this mistake in particular.
                silent = True
            elif matches(got, outcome):
                fits = True
                break
            elif outcome[0] == "error" or outcome[1] is None:
                silent = True  # this way of making it does not apply to these arguments
        if fits and seen is not None:
            if evidence is None:
                # A wrong answer that raised is no evidence against it: the code may
                # make the mistake and also fail on other shapes (a .view() that a
                # transposed tensor refuses).
                evidence = [(a, g) for a, g, right in seen()
                            if right or (weak and g[0] == "value")]
            if contradicted(mistake, evidence, matches):
                continue  # it fits here by coincidence: the learner's other answers say so
        if fits:
            fitting.append(mistake)
            if elsewhere is None or fitting == [mistake] and mistake.name in memory.told_apart:
                break
        elif not silent:
            memory.ruled_out.add(mistake.name)
    if not fitting:
        return None
    found = fitting[0]
    if elsewhere is not None and not (fitting == [found] and found.name in memory.told_apart):
        seen = elsewhere()
        right = [(args, got) for args, got, is_right in seen if is_right]
        for mistake in fitting:
            if contradicted(mistake, right, matches):
                memory.refuted.add(mistake.name)
        fitting = [m for m in fitting if m.name not in memory.refuted]
        if not fitting:
            return None
        answers = [(args, got) for args, got, _ in seen]
        standing = [m for m in fitting if not contradicted(m, answers, matches)]
        # Of those, the one that gives the most of the learner's answers itself, the
        # first on a tie: an error is no evidence against a mistake, but the same error
        # is evidence for it (not cropping at all raises the window's error with the
        # learner's own length, where cropping one too many raises it with 49).
        told = max(standing, key=lambda m: agreeing(m, answers, matches), default=None)
        if told is None and weak:
            return None  # a coincidence of weak evidence, which no other answer bears out
        found = told or fitting[0]
        if told is not None:
            memory.told_apart.add(told.name)
    if found.name not in memory.named:
        memory.named.append(found.name)
    return found


def contradicted(mistake: Mistake, seen: Sequence[tuple[tuple, Outcome]],
                 matches: Callable[[Outcome, Outcome], bool]) -> bool:
    """Whether the learner's outcome on some other arguments is not the mistake's there
    (a way of making it that fails or gives nothing there is no evidence either way,
    but where another way gives a value, an error the learner's matches is one of the
    mistake's answers: cropping once, before the loop, raises where not cropping at
    all does, and gives text where it does not)."""
    for args, got in seen:
        outcomes = [outcome_of(run, *fresh_args(args)) for run in mistake.runs]
        shown = [o for o in outcomes if o[0] != "error" and o[1] is not None]
        if shown and not any(matches(got, o) for o in outcomes if o[1] is not None):
            return True
    return False


def agreeing(mistake: Mistake, seen: Sequence[tuple[tuple, Outcome]],
             matches: Callable[[Outcome, Outcome], bool]) -> int:
    """How many of the learner's outcomes on other arguments some way of making the
    mistake gives too, errors included."""
    return sum(any(matches(got, outcome_of(run, *fresh_args(args))) for run in mistake.runs)
               for args, got in seen)


def nothing_but_nan(outcome: Outcome) -> bool:
    """Whether the outcome is a value that holds nan and nothing else."""
    if outcome[0] != "value":
        return False
    value = outcome[1]
    if isinstance(value, float):
        return math.isnan(value)
    return (isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel() > 0
            and bool(value.isnan().all()))


def name_mistake(got: Outcome, mistakes: Sequence[Mistake], args: tuple,
                 matches: Callable[[Outcome, Outcome], bool] = same_outcome,
                 expected: Outcome | None = None,
                 memory: Diagnoses | None = None,
                 elsewhere: Elsewhere | None = None, *,
                 seen: Elsewhere | None = None, weak: bool = False) -> Diagnosis:
    """The diagnosis naming the mistake `find_mistake` finds, if any."""
    mistake = find_mistake(got, mistakes, args, matches, expected, memory, elsewhere,
                           seen=seen, weak=weak)
    return naming(mistake) if mistake else Diagnosis()
