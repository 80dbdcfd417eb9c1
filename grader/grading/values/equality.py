"""When two outcomes of a call are the same: a learner's and a mistake's, a golden
and the live reference's, two attempts of one variant.

An outcome is ("value", result) or ("error", "Type: message"). Float tensors
are the same within the tolerances of grader/grading/values/tolerances.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from grader.grading.values.tolerances import ATOL, RTOL, activation_atol
from grader.locale import tr

Outcome = tuple[str, Any]  # ("value", result) or ("error", "Type: message")


class ErrorText(str):
    """An error as "Type: message", comparable across attempts.

    `type` and `message` are its two parts as data, `where` says where it was
    raised: nothing needs to read them back out of the text.
    """

    type: str = ""
    message: str = ""
    where: str = ""
    # What raised it where that is not the method called: a module's __init__, run
    # as the grader builds the module before its forward().
    raiser: str = ""

    @classmethod
    def of(cls, kind: str, message: str, where: str = "", raiser: str = "") -> ErrorText:
        text = cls(f"{kind}: {message}")
        text.type, text.message, text.where, text.raiser = kind, message, where, raiser
        return text


def raised(method: str, got: Outcome) -> str:
    return tr("{method}() raised {error}{where}", method=getattr(got[1], "raiser", "") or method,
              error=got[1], where=getattr(got[1], "where", ""))


def outcome_of(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Outcome:
    """("value", result) or ("error", "Type: message"), to compare two attempts."""
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - a variant's failure is an outcome to compare
        return ("error", ErrorText.of(type(exc).__name__, str(exc)))


def same_outcome(a: Outcome, b: Outcome) -> bool:
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


def same_activations(a: Outcome, b: Outcome) -> bool:
    """same_outcome for module outputs: whether a learner's output is a mistake's,
    within expect_activations' tolerance."""
    x, y = a[1], b[1]
    if a[0] != "value" or b[0] != "value" or not (
            isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)) or x.shape != y.shape:
        return a[0] == b[0] == "error" and x == y
    return bool(torch.allclose(x.double(), y.double(), rtol=RTOL, atol=activation_atol(y),
                               equal_nan=True))


def same_pair(a: Outcome, b: Outcome) -> bool:
    """Two outcomes that are the same pair of tensors, as a tuple or a list alike:
    how a learner's (x, y) is matched with a known mistake's."""
    if a[0] != b[0] or a[0] == "error":
        return a == b
    x, y = a[1], b[1]
    return (isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)) and len(x) == len(y)
            and all(isinstance(p, torch.Tensor) and isinstance(q, torch.Tensor)
                    and p.shape == q.shape and p.dtype == q.dtype and torch.equal(p, q)
                    for p, q in zip(x, y)))


def nan_as_zero(t: torch.Tensor) -> torch.Tensor:
    """`t` with nan as 0 and the infinities kept: by default nan_to_num would turn -inf
    into the dtype's lowest number, and a -inf overwritten by it would look kept."""
    return t.nan_to_num(0.0, posinf=float("inf"), neginf=float("-inf"))


def unchanged(a: Any, b: Any) -> bool:
    """Whether `b` is `a` bit for bit (nan where `a` has nan): an input the learner's
    call must leave as it was."""
    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and bool(torch.equal(a, b) or torch.equal(a.isnan(), b.isnan())
                         and torch.equal(nan_as_zero(a), nan_as_zero(b))))
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(unchanged(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(unchanged(a[k], b[k]) for k in a))
    return a == b
