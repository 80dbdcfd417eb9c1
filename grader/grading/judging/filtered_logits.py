"""Judging filtered logits (top-k, top-p and the like): every entry is its own
logit or the filter value, and the kept tokens are a set the filter's rule allows,
whichever of several tied tokens fill the last places."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from grader.grading.judging.any_result import expect_type, named
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import NUCLEUS_ATOL, TINY_PROB
from grader.locale import tr
from grader.wording import Plural, tokens


def filtered() -> Plural:
    """What a filter returns, named where it is judged; a plural, as the messages
    conjugate it."""
    return Plural(tr("the filtered logits"))


def _rows(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-1])


def _same(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a == b) | (a.isnan() & b.isnan())


def _token_list(mask: torch.Tensor, limit: int = 12) -> str:
    ids = mask.nonzero().flatten().tolist()
    return str(ids if len(ids) <= limit else [*ids[:limit], "..."])


def expect_like_logits(got: Any, logits: torch.Tensor, what: str) -> None:
    """A tensor of the logits' shape and dtype, as every logits processor returns."""
    expect_type(got, torch.Tensor, what)
    if tuple(got.shape) != tuple(logits.shape):
        shapes = {"what": named(what), "got": tuple(got.shape), "expected": tuple(logits.shape)}
        raise GradeFailure(
            tr("{what} have shape {got}, expected {expected}, the shape of the logits", **shapes)
            if isinstance(what, Plural) else
            tr("{what} has shape {got}, expected {expected}, the shape of the logits", **shapes))
    if got.dtype != logits.dtype:
        raise GradeFailure(tr("the dtype of {what} is {dtype}, but the logits are {expected}: "
                              "keep the input's dtype", what=named(what), dtype=got.dtype,
                              expected=logits.dtype))


def _expect_kept_or_filled(got: torch.Tensor, logits: torch.Tensor, filter_value: float,
                           what: str) -> None:
    """Every entry is its own logit, bit for bit, or filter_value."""
    g, x = _rows(got), _rows(logits)
    bad = ~(_same(g, x) | _same(g, torch.full_like(x, filter_value)))
    if bool(bad.any()):
        r, i = bad.nonzero()[0].tolist()
        index = (i,) if logits.dim() == 1 else (r, i)
        raise GradeFailure(tr(
            "entry {index} of {what} is {got}, but the logit there was {logit}: every entry "
            "must be either the logit itself, unchanged bit for bit, or {filter_value} where "
            "the token is removed", index=index, what=named(what), got=g[r, i].item(),
            logit=x[r, i].item(), filter_value=filter_value))


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
            row = "" if logits.dim() == 1 else tr(" (row {row})", row=r)
            raise GradeFailure(tr("{what}{row}: {problem}", what=named(what), row=row,
                                  problem=problem))


def expect_filtered(got: Any, logits: torch.Tensor, expected: torch.Tensor,
                    what: str | None = None,
                    filter_value: float = float("-inf")) -> None:
    """Exact judge for a filter whose kept set is unambiguous (top-k keeps every tie)."""
    what = what or filtered()

    def row_problem(g: torch.Tensor, x: torch.Tensor, e: torch.Tensor) -> str | None:
        mine, theirs = _kept(g, x, filter_value), _kept(e, x, filter_value)
        if torch.equal(mine, theirs):
            return None
        return tr("{count} kept {kept}, expected {n} {expected}", count=tokens(int(mine.sum())),
                  kept=_token_list(mine), n=int(theirs.sum()), expected=_token_list(theirs))

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
            return tr("token {removed} (probability {p_removed:.4g}) is removed, but the less "
                      "likely token {kept} ({p_kept:.4g}) is kept: the nucleus is made of the "
                      "most likely tokens", removed=b, p_removed=probs[b].item(), kept=a,
                      p_kept=probs[a].item())
    count = int(kept.sum())
    if _distinct_in_top(n_lo, key[order], distinct[order], True) <= count <= \
            _distinct_in_top(n_hi, key[order], distinct[order], False):
        return None
    totals = torch.cumsum(probs[order], dim=0)
    shown = ", ".join(tr("{token}: {probability:.4g} (total {total:.4g})", token=i,
                         probability=probs[i].item(), total=totals[j].item())
                      for j, i in enumerate(order[:8].tolist()))
    return (tr("{count} kept {kept}, expected {n} {expected} for top_p={top_p}, "
               "min_tokens_to_keep={min_tokens_to_keep}", count=tokens(count),
               kept=_token_list(kept), n=int(expected.sum()), expected=_token_list(expected),
               top_p=top_p, min_tokens_to_keep=min_tokens_to_keep)
            + "\n" + tr("  most likely first, token: probability (running total): {shown}",
                        shown=shown))


def judge_top_p(got: Any, logits: torch.Tensor, expected: torch.Tensor, top_p: float,
                min_tokens_to_keep: int, *, what: str | None = None,
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
    what = what or filtered()
    tol = 0.0 if exact_sums else NUCLEUS_ATOL
    _judge_filter_rows(got, logits, expected, what, filter_value,
                       lambda g, x, e: _nucleus_problem(g, x, e, top_p, min_tokens_to_keep,
                                                        filter_value, tol))


def same_filtering(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Two filter outcomes that keep the same logits in every row, whichever of the
    tied tokens each kept: how a learner's result is matched with a known mistake."""
    if a[0] != b[0]:
        return False
    x, y = a[1], b[1]
    if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
        # A number beside a tensor compares element by element, which is no answer.
        return not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor) and x == y
    if x.shape != y.shape or x.dtype != y.dtype or x.dim() == 0:
        return False
    return bool(_same(torch.sort(_rows(x), dim=-1).values,
                      torch.sort(_rows(y), dim=-1).values).all())
