"""Checks for problem 28, clip-grad-norm: clip by the global norm, in place.

A gradient does not cross the worker's pipe as a tensor's .grad, so each call runs
through `harness:clip_gradients` (grader/sandbox/worker/harnesses.py): a case describes the
parameters by their gradients (None for one that has none), the harness builds
them, calls clip_grad_norm() and hands back its answer and every gradient after it.
"""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import assume
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_tensor
from grader.grading.subject.inputs import inputs_of
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.values.equality import Outcome, outcome_of
from grader.grading.values.failures import Diagnosis, GradeFailure, naming
from grader.grading.values.tolerances import RTOL
from grader.locale import tr
from grader.wording import a_kind

Grads = list[torch.Tensor | None]
EPS = 1e-6  # clip_grad_norm_'s own
# The learners' copy judges its stored answers by the same tolerance (a rule of
# closeness of grader/release/practice/judge.py): each tensor at its own scale.
PRACTICE_RULE = "own-scale"


def norm(g: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vector_norm(g)


def clipped(parameters: Grads, max_norm: float, *, per_parameter: bool = False,
            always: bool = False, eps: float = EPS, in_place: bool = True,
            report_after: bool = False, skip_missing: bool = True,
            by_value: bool = False, summed: bool = False,
            squared: bool = False) -> tuple[Any, Grads]:
    """What the harness hands back for clipping done right, or one of its known
    mistakes: `per_parameter` clips each gradient by its own norm, `always` scales
    by max_norm / total even when under the limit, `eps` is the 1e-6 (0: left out),
    `in_place=False` leaves the gradients as they were, `report_after` returns
    the norm after clipping, `skip_missing=False` takes the norm of a .grad
    that is None too (and raises there), `by_value` clamps each entry to
    +-max_norm (clip_grad_value_'s job) instead of scaling, `summed` takes the
    sum of the gradients' norms for their total norm, and `squared` the sum of their
    squares, the root left out."""
    grads = [None if g is None else g.clone() for g in parameters]
    present = [g for g in grads if g is not None or not skip_missing]
    if not present:
        return torch.tensor(0.0), grads

    def total_of(group: Grads) -> torch.Tensor:
        norms = torch.stack([norm(g) for g in group])
        if squared:
            return norms.square().sum()
        return norms.sum() if summed else norm(norms)

    total = total_of(present)
    if by_value:
        for g in present:
            g.clamp_(-max_norm, max_norm)
        return total, grads
    groups = [[g] for g in present] if per_parameter else [present]
    for group in groups:
        own = total_of(group)
        coef = max_norm / (own + eps)
        if (always or coef < 1) and in_place:
            for g in group:
                g.mul_(coef)
    if report_after:
        total = total_of(present)
    return total, grads


MISTAKES = mistakes_of(globals(), clipped)


def gradients(seed: int, scale: float, shapes: tuple[tuple[int, ...], ...] = ((4, 3), (3,),
                                                                             (4,)),
              dtype: torch.dtype = torch.float32) -> Grads:
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(s, generator=generator, dtype=dtype) * scale for s in shapes]


def cases() -> dict[str, tuple]:
    grads = gradients(0, 1.0)
    return {
        "above-the-limit": (grads, 1.0),
        "far-above-the-limit": (gradients(1, 30.0), 0.5),
        "under-the-limit": (grads, 10.0),
        "one-gradient-much-larger": ([g * s for g, s in zip(gradients(2, 1.0), (0.01, 20.0,
                                                                               0.01))], 1.0),
        "a-parameter-without-a-gradient": ([gradients(3, 1.0)[0], None, gradients(3, 1.0)[2]],
                                           0.5),
        "no-gradients-at-all": ([None, None], 1.0),
        "tiny-gradients-and-limit": (gradients(4, 1e-6), 1e-6),
        "float64": (gradients(5, 2.0, dtype=torch.float64), 1.0),
    }


def draw_example(data: st.DataObject) -> tuple:
    count = data.draw(st.integers(1, 4), label="number of parameters")
    shapes = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2).map(tuple),
                             label=f"shape of parameter {i}") for i in range(count))
    scale = data.draw(st.sampled_from([1e-6, 1e-2, 1.0, 100.0]), label="scale of the gradients")
    grads: Grads = gradients(data.draw(st.integers(0, 2**16), label="seed"), scale, shapes)
    missing = data.draw(st.sets(st.integers(0, count - 1), max_size=count - 1),
                        label="parameters without a gradient")
    grads = [None if i in missing else g for i, g in enumerate(grads)]
    max_norm = data.draw(st.sampled_from([1e-6, 1e-2, 0.5, 1.0, 10.0]), label="max_norm")
    # clip_grad_norm_ also scales a total within 1e-6 under max_norm, by a factor
    # within 1e-6 / max_norm of 1; the statement lets `if total > max_norm` pass,
    # so that narrow band is not drawn.
    total = float(clipped(grads, max_norm)[0])
    assume(not max_norm - 2 * EPS < total <= max_norm + EPS)
    return grads, max_norm


def own_scale_atol(want: torch.Tensor) -> float:
    """Gradients are judged relative to their own size: clipping scales them all by
    one factor, and gradients of 1e-6 clipped by a wrong factor are still 1e-6 off
    by less than any fixed absolute tolerance."""
    return RTOL * float(want.double().abs().max()) if want.numel() else 0.0


def close(got: Any, want: torch.Tensor | None) -> bool:
    if want is None or got is None:
        return got is None and want is None
    return (isinstance(got, torch.Tensor) and got.shape == want.shape
            and torch.allclose(got.double(), want.double(), rtol=RTOL,
                               atol=own_scale_atol(want)))


def raised_on_none(outcome: Outcome) -> bool:
    """Whether a call raised because a None stood where a tensor was wanted: what
    reading p.grad of a parameter without a gradient raises, whichever operation
    met it first ("'NoneType' object has no attribute ...", "... not NoneType")."""
    return outcome[0] == "error" and "NoneType" in str(outcome[1])


def same_clipping(a: Outcome, b: Outcome) -> bool:
    """Whether two outcomes are the same clipping (a mistake's match), within the
    judge's tolerances; two calls that both raised on a None are the same mistake,
    whatever operation raised."""
    if raised_on_none(a) and raised_on_none(b):
        return True
    if a[0] != "value" or b[0] != "value":
        return a == b
    (total_a, grads_a), (total_b, grads_b) = a[1], b[1]
    return (isinstance(total_a, torch.Tensor) and isinstance(total_b, torch.Tensor)
            and close(total_a.reshape(()) if total_a.numel() == 1 else total_a, total_b)
            and len(grads_a) == len(grads_b)
            and all(close(x, y) for x, y in zip(grads_a, grads_b)))


def judge(got: Any, expected: tuple[torch.Tensor, Grads], call: Call) -> None:
    total, grads = got
    want_total, want_grads = expected
    if not isinstance(total, torch.Tensor):
        what = "None" if total is None else a_kind(type(total).__name__)
        raise GradeFailure(tr("clip_grad_norm() returned {value}, not the total norm as a 0-d "
                              "tensor (as clip_grad_norm_ returns it)", value=what))
    expect_tensor(total.reshape(()) if total.numel() == 1 else total, want_total,
                  tr("the total norm returned"), atol=own_scale_atol(want_total))
    for i, (grad, want) in enumerate(zip(grads, want_grads)):
        if want is None:
            if grad is not None:
                raise GradeFailure(tr("parameter {i} had no gradient, and has one after the "
                                      "call: skip the parameters whose .grad is None", i=i))
            continue
        expect_tensor(grad, want, tr("the gradient of parameter {i} after the call", i=i),
                      atol=own_scale_atol(want), same_dtype_as=tr("the gradients"))


def explain_unnamed(call: Call) -> Diagnosis | str:
    """A mistake the usual diagnosis passes over: on gradients of 1e-6, where the
    1e-6 matters, its outcome and the right one look alike within the absolute
    tolerance every problem shares, so it is tried again here within this
    problem's own, relative to the gradients' size."""
    expected = ("value", clipped(*call.args))
    for mistake in MISTAKES:
        for run in mistake.runs:
            outcome = outcome_of(run, *call.args)
            if not same_clipping(expected, outcome) and same_clipping(call.outcome, outcome):
                return naming(mistake)
    return ""


def by_their_gradients(named: dict[str, Any]) -> list[str]:
    """A failing call's inputs as the report shows them: a case gives the parameters
    by their gradients (grader/sandbox/worker/harnesses.py builds them), and shown as
    `parameters: [...]` they read as the weights themselves."""
    inputs = inputs_of(named)
    return [tr("parameters, each shown by its .grad (None: it has none): {grads}",
               grads=inputs["parameters"]), f"max_norm: {inputs['max_norm']}"]


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_clipping,
                    same_as_golden=same_clipping, fallback_hint=explain_unnamed,
                    harness="clip_gradients", describe=by_their_gradients)

test_fixed_gradients, test_random_gradients = CONTRACT.tests(
    "Clipping fixed gradients: above and under the limit, one much larger, some missing, "
    "tiny, float64",
    "Clipping random gradients of random parameters, against the reference",
    draw_example)
