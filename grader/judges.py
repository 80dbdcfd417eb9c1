"""Comparing a learner's result with the expected one, and explaining the difference."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from grader.checkkit import ATOL, RTOL, TIE_RTOL, GradeFailure


def expect_type(got: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(got, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise GradeFailure(f"{what} should be a {names}, but it is a {type(got).__name__}")


def expect_tensor(got: Any, expected: torch.Tensor, what: str = "the result", *,
                  rtol: float = RTOL, atol: float = ATOL, exact: bool = False) -> None:
    """Shape and dtype first, then values: the largest error and where it is."""
    expect_type(got, torch.Tensor, what)
    if tuple(got.shape) != tuple(expected.shape):
        raise GradeFailure(
            f"{what} has shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
        )
    both_float = got.is_floating_point() and expected.is_floating_point()
    if got.dtype != expected.dtype and not both_float:
        raise GradeFailure(f"{what} has dtype {got.dtype}, expected {expected.dtype}")
    if exact or not expected.is_floating_point():
        if torch.equal(got.to(expected.dtype), expected):
            return
        mismatch = (got.to(expected.dtype) != expected).nonzero()[0].tolist()
        raise GradeFailure(
            f"{what} differs at index {tuple(mismatch)}: got {got[tuple(mismatch)].item()}, "
            f"expected {expected[tuple(mismatch)].item()}"
        )
    g, e = got.double(), expected.double()
    same_inf = (g.isinf() == e.isinf()) & (g.isinf() <= (g == e))
    if not bool(same_inf.all()):
        index = tuple((~same_inf).nonzero()[0].tolist())
        raise GradeFailure(f"{what} differs at index {index}: got {g[index].item()}, "
                           f"expected {e[index].item()}")
    if bool(g.isnan().any()) and not bool(e.isnan().any()):
        index = tuple(g.isnan().nonzero()[0].tolist())
        raise GradeFailure(f"{what} holds nan at index {index}; expected {e[index].item()}")
    finite = e.isfinite()
    error = torch.where(finite, (g - e).abs(), torch.zeros_like(e))
    bound = atol + rtol * e.abs()
    if bool((error <= torch.where(finite, bound, torch.ones_like(e))).all()):
        return
    index = tuple(int(i) for i in torch.unravel_index((error - bound).argmax(), error.shape))
    raise GradeFailure(
        f"{what} is off by up to {error[index].item():.3g} (allowed {bound[index].item():.3g}) "
        f"at index {index}: got {g[index].item():.6g}, expected {e[index].item():.6g}"
    )


def show(text: str) -> str:
    return repr(text)


def expect_text(got: Any, expected: str, what: str = "the text") -> None:
    expect_type(got, str, what)
    if got == expected:
        return
    i = first_difference(got, expected)
    raise GradeFailure(
        f"{what} differs from character {i} on "
        f"({len(got)} characters, expected {len(expected)}):\n"
        f"  expected ...{show(expected[max(0, i - 20): i + 20])}\n"
        f"  got      ...{show(got[max(0, i - 20): i + 20])}"
    )


def first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def sampling_scores(probs: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """torch.multinomial(probs, 1) draws exponentials q and takes argmax(probs / q).

    Knowing that lets the grader see how close the runner-up was at any step.
    """
    return probs.double() / q.double()


def exponentials(vocab_size: int, state: torch.Tensor) -> torch.Tensor:
    """The exponentials torch.multinomial draws from a generator in `state`."""
    generator = torch.Generator()
    generator.set_state(state)
    return torch.empty(vocab_size, dtype=torch.float64).exponential_(1, generator=generator)


def judge_sampled_text(
    got: str,
    expected: str,
    *,
    step_probs: Callable[[list[int]], torch.Tensor],
    prompt_ids: list[int],
    int_to_char: dict[int, str],
    state_for_step: Callable[[int], torch.Tensor],
    window: Callable[[list[int]], list[int]],
    hint: str = "",
) -> None:
    """Pass text that equals the reference, or differs only at float-noise ties.

    Walks the learner's own text: at each step it asks the reference which
    tokens the sampler could pick from the learner's prefix. A token whose score
    is within TIE_RTOL of the best is a fair pick (same algorithm, rounding
    differently); anything else is a failure at that step, with the evidence.
    """
    expect_type(got, str, "generate()'s result")
    if got == expected:
        return
    if len(got) != len(expected):
        raise GradeFailure(
            f"expected {len(expected)} new characters, got {len(got)}"
            f"{' (did you return the prompt too?)' if len(got) > len(expected) else ''}"
            f"{hint}"
        )
    lookup = {c: i for i, c in int_to_char.items()}
    unknown = sorted(set(got) - set(lookup))
    if unknown:
        raise GradeFailure(f"the text holds characters the model cannot produce: {unknown}{hint}")
    ids = list(prompt_ids)
    for step, char in enumerate(got):
        probs = step_probs(window(ids))
        scores = sampling_scores(probs, exponentials(len(probs), state_for_step(step)))
        best = int(scores.argmax())
        chosen = lookup[char]
        if scores[chosen] < scores[best] * (1 - TIE_RTOL):
            raise GradeFailure(divergence_report(got, step, ids, window, probs, best, chosen,
                                                 int_to_char, expected) + hint)
        ids.append(chosen)


def divergence_report(got: str, step: int, ids: list[int], window: Callable, probs: torch.Tensor,
                      best: int, chosen: int, int_to_char: dict[int, str],
                      expected: str) -> str:
    seen = "".join(int_to_char[i] for i in window(ids))
    top = probs.double().topk(min(5, len(probs)))
    table = ", ".join(f"{int_to_char[int(i)]!r} {p:.3f}" for p, i in zip(top.values, top.indices))
    lo = max(0, step - 15)
    return (
        f"new character {step} differs: expected {int_to_char[best]!r}, got {int_to_char[chosen]!r}"
        f" (p={probs[chosen].item():.3g})\n"
        f"  expected ...{expected[lo:step + 15]!r}\n"
        f"  got      ...{got[lo:step + 15]!r}\n"
        f"  the model saw {seen!r} ({len(window(ids))} tokens) at that step\n"
        f"  top reference probabilities: {table}"
    )
