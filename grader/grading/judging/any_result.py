"""Comparing a learner's result with the expected one, and explaining the difference.

These judges are for any result: a tensor, a pair, a text, a type, an error.
Generated text is judged step by step in grader/grading/judging/generated_text.py, and
filtered logits in grader/grading/judging/filtered_logits.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from grader.grading.subject.kata import Call, Judge
from grader.grading.values.equality import raised
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import ATOL, RTOL, activation_atol
from grader.locale import tr, translated
from grader.wording import Plural, a_kind


def comparing(expect: Callable[..., None], what: str, **options: Any) -> Judge:
    """A judge that needs only the answer and the expected one, e.g.
    comparing(expect_text, "the decoded text")."""

    def judge(got: Any, expected: Any, call: Call) -> None:
        expect(got, expected, what, **options)

    return judge


def expect_type(got: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(got, kind):
        kinds = [kind] if isinstance(kind, type) else list(kind)
        names = kinds[0].__name__
        for other in kinds[1:]:
            names = tr("{first} or {second}", first=names, second=other.__name__)
        raise GradeFailure(tr("{what} should be {kind}, but it is {actual}",
                              what=named(what), kind=a_kind(names),
                              actual=a_kind(type(got).__name__)))


def named(what: str) -> str:
    """What a message calls a value (\"the logits\"), in the language in use where the
    catalog has it; as given otherwise."""
    return translated(what)


def result_of(method: str) -> str:
    """What a message calls a method's answer: "generate()'s result"."""
    return tr("{method}()'s result", method=method)


def expect_tensor(got: Any, expected: torch.Tensor, what: str | None = None, *,
                  rtol: float | torch.Tensor = RTOL, atol: float = ATOL, exact: bool = False,
                  same_dtype_as: str | None = None) -> None:
    """Shape and dtype first, then values: the largest error and where it is.

    Float results may differ in float dtype from the expected one unless
    `same_dtype_as` names the inputs whose dtype they must keep (say, "the
    logits": the message speaks of them in the plural, and of `what` as it is
    declared, singular unless a Plural).
    """
    what = what or tr("the result")
    _expect_values(got, expected, what, rtol=rtol, atol=atol, exact=exact)
    if same_dtype_as and got.dtype != expected.dtype:
        dtypes = {"what": named(what), "dtype": got.dtype, "inputs": named(same_dtype_as),
                  "expected": expected.dtype}
        raise GradeFailure(
            tr("{what} are {dtype}, but {inputs} were {expected}: keep the input's dtype",
               **dtypes) if isinstance(what, Plural) else
            tr("{what} is {dtype}, but {inputs} were {expected}: keep the input's dtype",
               **dtypes))


def expect_activations(got: Any, expected: torch.Tensor, what: str) -> None:
    """expect_tensor for the output of a module: the absolute tolerance follows the
    tensor's scale, so that a different order of the same sums passes."""
    expect_tensor(got, expected, what, atol=activation_atol(expected))


def _expect_values(got: Any, expected: torch.Tensor, what: str, *,
                   rtol: float | torch.Tensor, atol: float, exact: bool) -> None:
    if (isinstance(got, (tuple, list)) and got and isinstance(got[0], torch.Tensor)
            and tuple(got[0].shape) == tuple(expected.shape)):
        # nanoGPT's GPT returns (logits, loss): a learner who learned from it is one
        # step from the answer, and the message says which.
        raise GradeFailure(
            tr("{what} should be a Tensor, but it is a {actual} whose first item is a "
               "tensor of the expected shape {shape}", what=named(what),
               actual=type(got).__name__, shape=tuple(expected.shape)),
            hint=tr("return that tensor alone: a forward that returns (logits, loss), as "
                    "nanoGPT's GPT does, hands back a tuple"))
    expect_type(got, torch.Tensor, what)
    many, said = isinstance(what, Plural), named(what)
    if tuple(got.shape) != tuple(expected.shape):
        shapes = {"what": said, "got": tuple(got.shape), "expected": tuple(expected.shape)}
        raise GradeFailure(tr("{what} have shape {got}, expected {expected}", **shapes) if many
                           else tr("{what} has shape {got}, expected {expected}", **shapes))
    both_float = got.is_floating_point() and expected.is_floating_point()
    if got.dtype != expected.dtype and not both_float:
        dtypes = {"what": said, "got": got.dtype, "expected": expected.dtype}
        raise GradeFailure(tr("{what} have dtype {got}, expected {expected}", **dtypes) if many
                           else tr("{what} has dtype {got}, expected {expected}", **dtypes))
    if exact or not expected.is_floating_point():
        if torch.equal(got.to(expected.dtype), expected):
            return
        mismatch = tuple((got.to(expected.dtype) != expected).nonzero()[0].tolist())
        raise GradeFailure(_differs(said, many, mismatch, got[mismatch].item(),
                                    expected[mismatch].item()))
    g, e = got.double(), expected.double()
    same_inf = (g.isinf() == e.isinf()) & (g.isinf() <= (g == e))
    if not bool(same_inf.all()):
        index = tuple((~same_inf).nonzero()[0].tolist())
        raise GradeFailure(_differs(said, many, index, g[index].item(), e[index].item()))
    if bool(g.isnan().any()) and not bool(e.isnan().any()):
        index = tuple(g.isnan().nonzero()[0].tolist())
        nan = {"what": said, "index": index, "expected": e[index].item()}
        raise GradeFailure(tr("{what} hold nan at index {index}; expected {expected}", **nan)
                           if many else
                           tr("{what} holds nan at index {index}; expected {expected}", **nan))
    finite = e.isfinite()
    error = torch.where(finite, (g - e).abs(), torch.zeros_like(e))
    bound = atol + rtol * e.abs()
    if bool((error <= torch.where(finite, bound, torch.ones_like(e))).all()):
        return
    index = tuple(int(i) for i in torch.unravel_index((error - bound).argmax(), error.shape))
    off = {"what": said, "error": error[index].item(), "allowed": bound[index].item(),
           "index": index, "got": g[index].item(), "expected": e[index].item()}
    raise GradeFailure(
        tr("{what} are off by up to {error:.3g} (allowed {allowed:.3g}) at index {index}: "
           "got {got:.6g}, expected {expected:.6g}", **off) if many else
        tr("{what} is off by up to {error:.3g} (allowed {allowed:.3g}) at index {index}: "
           "got {got:.6g}, expected {expected:.6g}", **off)
    )


def _differs(said: str, many: bool, index: tuple, got: Any, expected: Any) -> str:
    where = {"what": said, "index": index, "got": got, "expected": expected}
    return (tr("{what} differ at index {index}: got {got}, expected {expected}", **where)
            if many else tr("{what} differs at index {index}: got {got}, expected {expected}",
                            **where))


def expect_pair(got: Any, expected: tuple, method: str, names: tuple[str, str]) -> None:
    """An (x, y) pair of tensors, a tuple or a list, each equal to the expected one."""
    expect_type(got, (tuple, list), result_of(method))
    if len(got) != 2:
        raise GradeFailure(tr("{method}()'s result holds {n} items; return the pair (x, y)",
                              method=method, n=len(got)))
    for mine, theirs, name in zip(got, expected, names):
        expect_tensor(mine, theirs, name, exact=True)


def show(text: str) -> str:
    return repr(text)


def expect_text(got: Any, expected: str, what: str | None = None) -> None:
    what = what or tr("the text")
    expect_type(got, str, what)
    if got == expected:
        return
    i = first_difference(got, expected)
    raise GradeFailure(
        tr("{what} differs from character {position} on ({length} characters, expected "
           "{expected}):", what=named(what), position=i + 1, length=len(got),
           expected=len(expected))
        + "\n" + side_by_side(show(expected[max(0, i - 20): i + 20]),
                              show(got[max(0, i - 20): i + 20]))
    )


def side_by_side(expected: str, got: str) -> str:
    """The expected text and the learner's, where they part, one above the other."""
    return tr("  expected ...{expected}\n  got      ...{got}", expected=expected, got=got)


def first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def expect_error(got: tuple[str, Any], kind: str, what: str, method: str) -> None:
    """An outcome (from kata.outcome) must be an error of type `kind` with a message."""
    if got[0] == "value":
        raise GradeFailure(tr("{what} returned a value; it should raise {kind}", what=what,
                              kind=kind))
    name, message = getattr(got[1], "type", ""), getattr(got[1], "message", "")
    if name != kind:
        raise GradeFailure(tr("{what} should raise {kind}; instead {raised}", what=what,
                              kind=kind, raised=raised(method, got)))
    if not message.strip():
        raise GradeFailure(tr("{what} raised {kind} without a message; say what is wrong",
                              what=what, kind=kind))
