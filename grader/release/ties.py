"""Other right answers to a case that runs a model: where two picks tie in float rounding.

The instructor's grade judges generated text fairly: a pick that ties with the
reference's up to float rounding is right too, and the text goes on from it.
Stored answers cannot follow a learner's text live, so the release finds those
other texts ahead: it runs the reference again on models whose outputs are moved
by a few units in the last place of float32 (as another order of additions moves
them), and keeps each new answer that the check's own judge accepts. A learner
whose rounding goes another way at a tie then gets one of the stored answers.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

# float32 carries 24 bits; another order of operations moves a logit by a few units
# in its last place.
ROUNDING = 4 * 2.0 ** -24
RERUNS = 2  # how many moved copies of each model the reference runs on


class Rounded(torch.nn.Module):
    """A model whose logits are moved by float32's rounding, differently at every call."""

    def __init__(self, model: torch.nn.Module, seed: int) -> None:
        super().__init__()
        self.model = model
        self.context_length = model.context_length
        self.generator = torch.Generator().manual_seed(seed)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        logits = self.model(context)
        noise = torch.randn(logits.shape, generator=self.generator, dtype=torch.float64)
        return (logits.double() * (1 + ROUNDING * noise)).to(logits.dtype)


def rounded_args(args: list[Any], seed: int) -> list[Any]:
    return [Rounded(a, seed + i) if isinstance(a, torch.nn.Module) else a
            for i, a in enumerate(args)]


def other_answers(contract: Any, reference: Any, args: tuple, expected: Any,
                  same: Any) -> list[Any]:
    """The answers, other than `expected`, that the reference gives on rounded copies of
    the case's models and that the check's judge accepts; [] for a case without a model.
    `same(a, b)` says whether the practice judge already takes a for b."""
    from grader.grading.subject.kata import Call
    from grader.grading.subject.reference import fresh_args
    from grader.grading.values.equality import outcome_of
    from grader.grading.values.failures import GradeFailure
    from grader.model.spec import ModelSpec

    if not any(isinstance(a, ModelSpec) for a in args):
        return []
    method = getattr(reference, contract.method)
    named = inspect.signature(method).bind(*args)
    named.apply_defaults()
    found: list[Any] = []
    for seed in range(RERUNS):
        with torch.no_grad():
            outcome = outcome_of(method, *rounded_args(fresh_args(args), 1000 * seed))
        if outcome[0] != "value":
            continue
        answer = list(outcome[1]) if contract.iterate else outcome[1]
        if same(answer, expected) or any(same(answer, other) for other in found):
            continue
        call = Call(contract.method, args, dict(named.arguments), ("value", answer),
                    None, None)  # type: ignore[arg-type] - no worker's record: the judges
        # of cases on models judge the answer alone.
        try:
            contract.judge(answer, expected, call)
        except GradeFailure:
            continue  # moved beyond a tie: not an answer the instructor's grade takes
        found.append(answer)
    return found


def rounded_tensors(args: list[Any], seed: int) -> list[Any]:
    """`args` with each floating tensor moved by float32's rounding, as rounded_args moves
    a model's logits; other arguments as they are."""
    generator = torch.Generator().manual_seed(seed)

    def moved(a: Any) -> Any:
        if not (isinstance(a, torch.Tensor) and a.is_floating_point()):
            return a
        noise = torch.randn(a.shape, generator=generator, dtype=torch.float64)
        return (a.double() * (1 + ROUNDING * noise)).to(a.dtype)

    return [moved(a) for a in rounded_args(args, seed)]


def steady(contract: Any, reference: Any, args: tuple, right: list[Any]) -> bool:
    """Whether the reference gives one of the `right` answers on rounded copies of `args`
    too (its models' logits and its float tensors moved by a few units in their last
    place). A drawn example where it does not sits on a tie (top-p at the edge of the
    nucleus, among equal logits, with min_tokens_to_keep cutting through them), which
    the instructor's grade judges live and fairly and stored answers cannot: a learner's
    right answer that breaks the tie otherwise would fail there in the copy alone. The
    fixed cases, chosen by hand, keep their ties."""
    from grader.grading.subject.reference import fresh_args
    from grader.grading.values.equality import outcome_of, same_outcome

    method = getattr(reference, contract.method)
    for seed in range(RERUNS):
        with torch.no_grad():
            outcome = outcome_of(method, *rounded_tensors(fresh_args(args), 1000 * seed + 7))
        if outcome[0] == "value" and contract.iterate:
            outcome = ("value", list(outcome[1]))
        if not any(same_outcome(outcome, ("value", want)) for want in right):
            return False
    return True


def swapped_ties(logits: torch.Tensor, expected: torch.Tensor) -> list[torch.Tensor]:
    """Answers to a filter of `logits` that, in one row, remove a token `expected` keeps
    and keep one it removes, both less likely than TINY_PROB: to float32's softmax
    they are equally likely (0), and a right filter that sorts by probability, not by
    logit, may keep either (a removed token of -inf kept stays -inf, so that answer
    seems to keep one token fewer)."""
    from grader.grading.values.tolerances import TINY_PROB

    if not (isinstance(logits, torch.Tensor) and isinstance(expected, torch.Tensor)
            and logits.shape == expected.shape and logits.dim() > 0
            and logits.is_floating_point()):
        return []
    x, e = logits.reshape(-1, logits.shape[-1]), expected.reshape(-1, logits.shape[-1])
    tiny = torch.softmax(x.double(), dim=-1) < TINY_PROB
    kept = (e == x) & x.isfinite()
    found = []
    for r in range(x.shape[0]):
        removed = ~kept[r] & (e[r] != x[r])
        drop = (kept[r] & tiny[r]).nonzero().flatten()
        take = (removed & tiny[r]).nonzero().flatten()
        if len(drop) and len(take):
            other = e.clone()
            other[r, int(drop[0])] = e[r, int(removed.nonzero()[0])]
            other[r, int(take[0])] = x[r, int(take[0])]
            found.append(other.reshape(expected.shape))
    return found


def judged_otherwise(contract: Any, reference: Any, args: tuple, expected: Any,
                     same: Any) -> bool:
    """Whether the check's judge takes an answer to a filter's drawn example that the
    copy's (`same(a, b)`: a taken for b) does not: one that keeps another of tokens the
    instructor's grade holds equally likely (swapped_ties). The copy's judge takes
    tied logits in any order, not tied probabilities; the instructor's takes both."""
    from grader.grading.subject.kata import Call
    from grader.grading.values.failures import GradeFailure

    named = inspect.signature(getattr(reference, contract.method)).bind(*args)
    named.apply_defaults()
    for answer in swapped_ties(args[0] if args else None, expected):
        if same(answer, expected):
            continue
        call = Call(contract.method, args, dict(named.arguments), ("value", answer),
                    None, None)  # type: ignore[arg-type] - a filter's judge reads the answer
        try:
            contract.judge(answer, expected, call)
        except GradeFailure:
            continue
        return True
    return False

