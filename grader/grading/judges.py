"""Comparing a learner's result with the expected one, and explaining the difference."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from grader.grading import cases
from grader.grading.skeleton import (
    ATOL,
    RTOL,
    TIE_RTOL,
    Call,
    GradeFailure,
    Judge,
    fresh_args,
    raised,
)
from grader.wording import agree, count


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


def activation_atol(expected: torch.Tensor) -> float:
    """The absolute tolerance of an activation tensor: see skeleton's tolerances."""
    finite = expected.double()[expected.isfinite()]
    scale = float(finite.pow(2).mean().sqrt()) if finite.numel() else 0.0
    return ATOL + RTOL * scale


def expect_activations(got: Any, expected: torch.Tensor, what: str) -> None:
    """expect_tensor for the output of a module: the absolute tolerance follows the
    tensor's scale, so that a different order of the same sums passes."""
    expect_tensor(got, expected, what, atol=activation_atol(expected))


def same_activations(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """same_outcome for module outputs: whether a learner's output is a mistake's,
    within expect_activations' tolerance."""
    x, y = a[1], b[1]
    if a[0] != "value" or b[0] != "value" or not (
            isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)) or x.shape != y.shape:
        return a[0] == b[0] == "error" and x == y
    return bool(torch.allclose(x.double(), y.double(), rtol=RTOL, atol=activation_atol(y),
                               equal_nan=True))


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


def same_pair(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Two outcomes that are the same pair of tensors, as a tuple or a list alike:
    how a learner's (x, y) is matched with a known mistake's."""
    if a[0] != b[0] or a[0] == "error":
        return a == b
    x, y = a[1], b[1]
    return (isinstance(x, (tuple, list)) and isinstance(y, (tuple, list)) and len(x) == len(y)
            and all(isinstance(p, torch.Tensor) and isinstance(q, torch.Tensor)
                    and p.shape == q.shape and p.dtype == q.dtype and torch.equal(p, q)
                    for p, q in zip(x, y)))


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


def sampling_scores(probs: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """torch.multinomial(probs, 1) draws exponentials q and takes argmax(probs / q).

    Knowing that lets the grader see how close the runner-up was at any step.
    """
    return probs.double() / q.double()


def exponentials(vocab_size: int, state: torch.Tensor) -> torch.Tensor:
    """The exponentials torch.multinomial draws from a generator in `state`, for
    float32 probabilities. They are drawn in float32 as it draws them: before
    torch 2.7 float64 ones were other numbers (tests/test_torch_versions.py)."""
    generator = torch.Generator()
    generator.set_state(state)
    return torch.empty(vocab_size, dtype=torch.float32).exponential_(1, generator=generator)


@dataclass(frozen=True)
class Choice:
    """The reference's pick at one step of generation, and the picks as good as it."""

    probs: torch.Tensor  # the next-token probabilities, for the report
    best: int
    fair: torch.Tensor  # per token: the pick, or tied with it up to float rounding


def sampled_choice(probs: torch.Tensor, state: torch.Tensor) -> Choice:
    """torch.multinomial's pick from a generator in `state`; a token whose score is
    within TIE_RTOL of the best is a fair pick."""
    scores = sampling_scores(probs, exponentials(len(probs), state))
    return Choice(probs, int(scores.argmax()), scores >= scores.max() * (1 - TIE_RTOL))


def judge_steps(
    got: Any,
    expected: str,
    *,
    what: str,
    prompt_ids: list[int],
    int_to_char: dict[int, str],
    choose: Callable[[list[int], int], Choice],
    window: Callable[[list[int]], list[int]],
    hint: str = "",
) -> None:
    """Pass text that equals the reference, or differs only at float-noise ties.

    Walks the learner's own text: at each step `choose(window, step)` says
    which tokens the reference could pick after the learner's prefix (a tie
    within float rounding is a fair pick: the same algorithm, rounding
    differently); anything else is a failure at that step, with the evidence.
    """
    expect_type(got, str, what)
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
        choice = choose(window(ids), step)
        chosen = lookup[char]
        if not bool(choice.fair[chosen]):
            raise GradeFailure(divergence_report(got, step, ids, window, choice.probs,
                                                 choice.best, chosen, int_to_char, expected)
                               + hint)
        ids.append(chosen)


def reset_sampling_choice(model: torch.nn.Module, window: list[int]) -> Choice:
    """Track 1's pick after `window`: seed 0 and the generator restored after every
    draw, so every step draws the same random numbers."""
    return sampled_choice(cases.next_token_probs(model, window), cases.seed_state(0))


def judge_reset_sampled_text(got: Any, expected: str, *, model: torch.nn.Module,
                             prompt_ids: list[int], context_length: int,
                             int_to_char: dict[int, str], what: str) -> None:
    """judge_steps for text sampled as Track 1 samples (see reset_sampling_choice)."""
    judge_steps(got, expected, what=what, prompt_ids=prompt_ids, int_to_char=int_to_char,
                choose=lambda window, step: reset_sampling_choice(model, window),
                window=lambda ids: ids[-context_length:])


def judge_reset_sampling(got: Any, expected: str, call: Call) -> None:
    """judge_reset_sampled_text on generate()-style arguments: (model, new_chars,
    context, context_length, int_to_char)."""
    model, _new_chars, context, context_length, int_to_char = fresh_args(call.args[:5])
    judge_reset_sampled_text(got, expected, model=model, prompt_ids=context[0].tolist(),
                             context_length=context_length, int_to_char=int_to_char,
                             what=f"{call.method}()'s result")


def divergence_report(got: str, step: int, ids: list[int], window: Callable, probs: torch.Tensor,
                      best: int, chosen: int, int_to_char: dict[int, str],
                      expected: str) -> str:
    seen = "".join(int_to_char[i] for i in window(ids))
    top = probs.double().topk(min(5, len(probs)))
    table = ", ".join(f"{int_to_char[int(i)]!r} {p:.3f}" for p, i in zip(top.values, top.indices))
    lo = max(0, step - 15)
    return (
        f"new character {step + 1} differs: expected {int_to_char[best]!r}, "
        f"got {int_to_char[chosen]!r}"
        f" (p={probs[chosen].item():.3g})\n"
        f"  expected ...{expected[lo:step + 15]!r}\n"
        f"  got      ...{got[lo:step + 15]!r}\n"
        f"  the model saw {seen!r} ({count(len(window(ids)), 'token')}) at that step\n"
        f"  top reference probabilities: {table}"
    )


# -- filtered logits (top-k, top-p and the like) ------------------------------------------

NUCLEUS_ATOL = 1e-5  # a cumulative probability this close to top_p may round to either side
TINY_PROB = 1e-30  # below this a float32 softmax gives 0: the order of such tokens is noise


def _rows(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-1])


def _same(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a == b) | (a.isnan() & b.isnan())


def _token_list(mask: torch.Tensor, limit: int = 12) -> str:
    ids = mask.nonzero().flatten().tolist()
    return str(ids if len(ids) <= limit else [*ids[:limit], "..."])


def _count(n: int) -> str:
    return f"{n} token{'' if n == 1 else 's'}"


def _row_label(t: torch.Tensor, r: int) -> str:
    return "" if t.dim() == 1 else f" (row {r})"


def expect_like_logits(got: Any, logits: torch.Tensor, what: str) -> None:
    """A tensor of the logits' shape and dtype, as every logits processor returns."""
    expect_type(got, torch.Tensor, what)
    if tuple(got.shape) != tuple(logits.shape):
        raise GradeFailure(f"{what} has shape {tuple(got.shape)}, expected "
                           f"{tuple(logits.shape)}, the shape of the logits")
    if got.dtype != logits.dtype:
        raise GradeFailure(f"the dtype of {what} is {got.dtype}, but the logits are "
                           f"{logits.dtype}: keep the input's dtype")


def _expect_kept_or_filled(got: torch.Tensor, logits: torch.Tensor, filter_value: float,
                           what: str) -> None:
    """Every entry is its own logit, bit for bit, or filter_value."""
    g, x = _rows(got), _rows(logits)
    bad = ~(_same(g, x) | _same(g, torch.full_like(x, filter_value)))
    if bool(bad.any()):
        r, i = bad.nonzero()[0].tolist()
        index = (i,) if logits.dim() == 1 else (r, i)
        raise GradeFailure(
            f"entry {index} of {what} is {g[r, i].item()}, but the logit there was "
            f"{x[r, i].item()}: every entry must be either the logit itself, unchanged bit "
            f"for bit, or {filter_value} where the token is removed"
        )


def _kept(g: torch.Tensor, x: torch.Tensor, filter_value: float) -> torch.Tensor:
    """Tokens whose logit survived; a logit equal to filter_value tells nothing."""
    return _same(g, x) & ~_same(x, torch.full_like(x, filter_value))


def _judge_filter_rows(got: Any, logits: torch.Tensor, expected: torch.Tensor, what: str,
                       filter_value: float,
                       row_problem: Callable[[torch.Tensor, torch.Tensor, torch.Tensor],
                                             str | None]) -> None:
    """Shape, dtype and entries first; then `row_problem(got, logits, expected)` says
    what is wrong with each row that differs from the reference's, if anything."""
    expect_like_logits(got, logits, what)
    if bool(_same(got, expected).all()):
        return
    _expect_kept_or_filled(got, logits, filter_value, what)
    g, x, e = _rows(got), _rows(logits), _rows(expected)
    for r in range(x.shape[0]):
        problem = None if bool(_same(g[r], e[r]).all()) else row_problem(g[r], x[r], e[r])
        if problem:
            raise GradeFailure(f"{what}{_row_label(logits, r)}: {problem}")


def expect_filtered(got: Any, logits: torch.Tensor, expected: torch.Tensor,
                    what: str = "the filtered logits",
                    filter_value: float = float("-inf")) -> None:
    """Exact judge for a filter whose kept set is unambiguous (top-k keeps every tie)."""

    def row_problem(g: torch.Tensor, x: torch.Tensor, e: torch.Tensor) -> str | None:
        mine, theirs = _kept(g, x, filter_value), _kept(e, x, filter_value)
        if torch.equal(mine, theirs):
            return None
        return (f"{_count(int(mine.sum()))} kept {_token_list(mine)}, expected "
                f"{int(theirs.sum())} {_token_list(theirs)}")

    _judge_filter_rows(got, logits, expected, what, filter_value, row_problem)


def _distinct_in_top(n: int, key: torch.Tensor, distinct: torch.Tensor, fewest: bool) -> int:
    """How many distinguishable tokens the n most likely can hold, ties ordered either way.

    `key` is sorted descending and `distinct` follows the same order.
    """
    if n == 0:
        return 0
    above = key > key[n - 1]
    tied = key == key[n - 1]
    take = n - int(above.sum())
    d_above = int((distinct & above).sum())
    d_tied = int((distinct & tied).sum())
    if fewest:
        return d_above + max(0, take - (int(tied.sum()) - d_tied))
    return d_above + min(take, d_tied)


def _nucleus_problem(g: torch.Tensor, x: torch.Tensor, e: torch.Tensor, top_p: float,
                     min_tokens_to_keep: int, filter_value: float, tol: float) -> str | None:
    """Why row g is not a top-p filtering of row x, or None if it is a fair one."""
    distinct = ~_same(x, torch.full_like(x, filter_value))
    kept, expected = _kept(g, x, filter_value), _kept(e, x, filter_value)
    probs = torch.softmax(x.double(), dim=-1)
    key = torch.where(probs < TINY_PROB, torch.zeros_like(probs), probs)
    order = torch.sort(key, descending=True, stable=True).indices
    before = torch.cumsum(probs[order], dim=0) - probs[order]  # mass of the likelier tokens
    size = x.shape[-1]
    n_lo = min(max(int((before < top_p - tol).sum()), min_tokens_to_keep), size)
    n_hi = min(max(int((before < top_p + tol).sum()), min_tokens_to_keep), size)
    removed = distinct & ~kept
    if bool(kept.any()) and bool(removed.any()):
        a = int(torch.where(kept, key, torch.full_like(key, 2.0)).argmin())
        b = int(torch.where(removed, key, torch.full_like(key, -1.0)).argmax())
        if key[b] > key[a] * (1 + NUCLEUS_ATOL):
            return (f"token {b} (probability {probs[b].item():.4g}) is removed, but the less "
                    f"likely token {a} ({probs[a].item():.4g}) is kept: the nucleus is made of "
                    "the most likely tokens")
    count = int(kept.sum())
    if _distinct_in_top(n_lo, key[order], distinct[order], True) <= count <= \
            _distinct_in_top(n_hi, key[order], distinct[order], False):
        return None
    totals = torch.cumsum(probs[order], dim=0)
    shown = ", ".join(f"{i}: {probs[i].item():.4g} (total {totals[j].item():.4g})"
                      for j, i in enumerate(order[:8].tolist()))
    return (f"{_count(count)} kept {_token_list(kept)}, expected {int(expected.sum())} "
            f"{_token_list(expected)} for top_p={top_p}, min_tokens_to_keep="
            f"{min_tokens_to_keep}\n  most likely first, token: probability (running total): "
            f"{shown}")


def judge_top_p(got: Any, logits: torch.Tensor, expected: torch.Tensor, top_p: float,
                min_tokens_to_keep: int, *, what: str = "the filtered logits",
                filter_value: float = float("-inf"), exact_sums: bool = False) -> None:
    """Pass the reference's nucleus, or another one the top-p rule allows.

    Two things may fairly differ from the reference. Which of several tied tokens
    fill the last places (any order of ties is a correct sort), and, where a
    running total of probabilities lands within NUCLEUS_ATOL of top_p, whether
    that token is kept (float rounding decides; sorting descending rounds
    otherwise than sorting ascending). With exact_sums, for logits whose
    probabilities and their sums are exact in float32 and float64 (equal
    logits, powers of two), a boundary is judged exactly: kept only when the
    likelier tokens hold strictly less than top_p.
    """
    tol = 0.0 if exact_sums else NUCLEUS_ATOL
    _judge_filter_rows(got, logits, expected, what, filter_value,
                       lambda g, x, e: _nucleus_problem(g, x, e, top_p, min_tokens_to_keep,
                                                        filter_value, tol))


def expect_error(got: tuple[str, Any], kind: str, what: str, method: str) -> None:
    """An outcome (from kata.outcome) must be an error of type `kind` with a message."""
    if got[0] == "value":
        raise GradeFailure(f"{what} returned a value; it should raise {kind}")
    name, _, message = str(got[1]).partition(": ")
    if name != kind:
        raise GradeFailure(f"{what} should raise {kind}; instead {raised(method, got)}")
    if not message.strip():
        raise GradeFailure(f"{what} raised {kind} without a message; say what is wrong")


def same_filtering(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Two filter outcomes that keep the same logits in every row, whichever of the
    tied tokens each kept: how a learner's result is matched with a known mistake."""
    if a[0] != b[0]:
        return False
    x, y = a[1], b[1]
    if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
        return x == y
    if x.shape != y.shape or x.dtype != y.dtype or x.dim() == 0:
        return False
    return bool(_same(torch.sort(_rows(x), dim=-1).values,
                      torch.sort(_rows(y), dim=-1).values).all())
