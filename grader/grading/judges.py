"""Comparing a learner's result with the expected one, and explaining the difference.

These judges are for any result: a tensor, a pair, a text, a type, an error.
Generated text is judged step by step in grader/grading/sampling_judges.py, and
filtered logits in grader/grading/filter_judges.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from grader.grading.equality import raised
from grader.grading.failures import GradeFailure
from grader.grading.kata import Call, Judge
from grader.grading.tolerances import ATOL, RTOL, activation_atol
from grader.wording import agree


def comparing(expect: Callable[..., None], what: str, **options: Any) -> Judge:
    """A judge that needs only the answer and the expected one, e.g.
    comparing(expect_text, "the decoded text")."""

    def judge(got: Any, expected: Any, call: Call) -> None:
        expect(got, expected, what, **options)

    return judge


def expect_type(got: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(got, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise GradeFailure(f"{what} should be a {names}, but it is a {type(got).__name__}")


def expect_tensor(got: Any, expected: torch.Tensor, what: str = "the result", *,
                  rtol: float = RTOL, atol: float = ATOL, exact: bool = False,
                  same_dtype_as: str | None = None) -> None:
    """Shape and dtype first, then values: the largest error and where it is.

    Float results may differ in float dtype from the expected one unless
    `same_dtype_as` names the inputs whose dtype they must keep (say, "the
    logits"; the message speaks of both in the plural).
    """
    _expect_values(got, expected, what, rtol=rtol, atol=atol, exact=exact)
    if same_dtype_as and got.dtype != expected.dtype:
        raise GradeFailure(f"{what} are {got.dtype}, but {same_dtype_as} were "
                           f"{expected.dtype}: keep the input's dtype")


def expect_activations(got: Any, expected: torch.Tensor, what: str) -> None:
    """expect_tensor for the output of a module: the absolute tolerance follows the
    tensor's scale, so that a different order of the same sums passes."""
    expect_tensor(got, expected, what, atol=activation_atol(expected))


def _expect_values(got: Any, expected: torch.Tensor, what: str, *, rtol: float, atol: float,
                   exact: bool) -> None:
    expect_type(got, torch.Tensor, what)
    if tuple(got.shape) != tuple(expected.shape):
        raise GradeFailure(
            f"{agree(what, 'has')} shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
        )
    both_float = got.is_floating_point() and expected.is_floating_point()
    if got.dtype != expected.dtype and not both_float:
        raise GradeFailure(f"{agree(what, 'has')} dtype {got.dtype}, expected {expected.dtype}")
    if exact or not expected.is_floating_point():
        if torch.equal(got.to(expected.dtype), expected):
            return
        mismatch = (got.to(expected.dtype) != expected).nonzero()[0].tolist()
        raise GradeFailure(
            f"{agree(what, 'differs')} at index {tuple(mismatch)}: "
            f"got {got[tuple(mismatch)].item()}, "
            f"expected {expected[tuple(mismatch)].item()}"
        )
    g, e = got.double(), expected.double()
    same_inf = (g.isinf() == e.isinf()) & (g.isinf() <= (g == e))
    if not bool(same_inf.all()):
        index = tuple((~same_inf).nonzero()[0].tolist())
        raise GradeFailure(f"{agree(what, 'differs')} at index {index}: got {g[index].item()}, "
                           f"expected {e[index].item()}")
    if bool(g.isnan().any()) and not bool(e.isnan().any()):
        index = tuple(g.isnan().nonzero()[0].tolist())
        raise GradeFailure(f"{agree(what, 'holds')} nan at index {index}; "
                           f"expected {e[index].item()}")
    finite = e.isfinite()
    error = torch.where(finite, (g - e).abs(), torch.zeros_like(e))
    bound = atol + rtol * e.abs()
    if bool((error <= torch.where(finite, bound, torch.ones_like(e))).all()):
        return
    index = tuple(int(i) for i in torch.unravel_index((error - bound).argmax(), error.shape))
    raise GradeFailure(
        f"{agree(what, 'is')} off by up to {error[index].item():.3g} "
        f"(allowed {bound[index].item():.3g}) "
        f"at index {index}: got {g[index].item():.6g}, expected {e[index].item():.6g}"
    )


def expect_pair(got: Any, expected: tuple, method: str, names: tuple[str, str]) -> None:
    """An (x, y) pair of tensors, a tuple or a list, each equal to the expected one."""
    expect_type(got, (tuple, list), f"{method}()'s result")
    if len(got) != 2:
        raise GradeFailure(f"{method}()'s result holds {len(got)} items; return the pair (x, y)")
    for mine, theirs, name in zip(got, expected, names):
        expect_tensor(mine, theirs, name, exact=True)


def show(text: str) -> str:
    return repr(text)


def expect_text(got: Any, expected: str, what: str = "the text") -> None:
    expect_type(got, str, what)
    if got == expected:
        return
    i = first_difference(got, expected)
    raise GradeFailure(
        f"{what} differs from character {i + 1} on "
        f"({len(got)} characters, expected {len(expected)}):\n"
        f"  expected ...{show(expected[max(0, i - 20): i + 20])}\n"
        f"  got      ...{show(got[max(0, i - 20): i + 20])}"
    )


def first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def expect_error(got: tuple[str, Any], kind: str, what: str, method: str) -> None:
    """An outcome (from kata.outcome) must be an error of type `kind` with a message."""
    if got[0] == "value":
        raise GradeFailure(f"{what} returned a value; it should raise {kind}")
    name, message = getattr(got[1], "type", ""), getattr(got[1], "message", "")
    if name != kind:
        raise GradeFailure(f"{what} should raise {kind}; instead {raised(method, got)}")
    if not message.strip():
        raise GradeFailure(f"{what} raised {kind} without a message; say what is wrong")
