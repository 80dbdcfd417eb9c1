"""The sampling filters the checks compute their expected answers with, written once.

Each is the rule the statements give, independent of the references. The few
keyword knobs (`strict`, `descending`, `scatter`, `dim`) make the checks' known
mistakes of the same computation; left at their defaults they are the rule.
"""

from __future__ import annotations

import torch

INF = float("-inf")


def kth_largest(x: torch.Tensor, k: int) -> torch.Tensor:
    """The k-th largest logit of each row (the row's largest when k exceeds it), kept as a
    column so that it compares against the row."""
    return torch.topk(x, min(k, x.shape[-1]), dim=-1).values[..., -1:]


def top_k(x: torch.Tensor, k: int, fill: float = INF) -> torch.Tensor:
    """Every logit below the k-th largest set to `fill`; ties with it all stay."""
    return x.masked_fill(x < kth_largest(x, k), fill)


def sorted_totals(x: torch.Tensor, *, descending: bool = False,
                  dim: int = -1) -> tuple[torch.Tensor, torch.Tensor]:
    """Each row sorted ascending, the running totals of its probabilities, and where
    each sorted logit came from. (`descending` sorts the other way, and `dim` takes the
    softmax over another dimension: two known mistakes.)"""
    sorted_logits, sorted_indices = torch.sort(x, dim=-1, descending=descending)
    return sorted_logits.softmax(dim=dim).cumsum(dim=-1), sorted_indices


def running_totals(x: torch.Tensor) -> torch.Tensor:
    """Each logit's probability plus every less likely one's, in vocabulary order."""
    cumulative, indices = sorted_totals(x)
    return cumulative.scatter(-1, indices, cumulative)


def nucleus_mask(x: torch.Tensor, top_p: float, keep: int = 1, *, strict: bool = False,
                 descending: bool = False, scatter: bool = True,
                 dim: int = -1) -> torch.Tensor:
    """Which logits the nucleus filter removes: sorted ascending, those whose running
    total of probability is still <= 1 - top_p (the boundary counts as reached; `strict`
    is the mistake of <), the `keep` most likely always staying. (`scatter=False` is the
    mistake of leaving the mask in sorted order.)"""
    cumulative, sorted_indices = sorted_totals(x, descending=descending, dim=dim)
    remove = cumulative < 1 - top_p if strict else cumulative <= 1 - top_p
    remove[..., -keep:] = False
    return remove.scatter(-1, sorted_indices, remove) if scatter else remove


def top_p(x: torch.Tensor, p: float, keep: int = 1, fill: float = INF) -> torch.Tensor:
    """The smallest set of most likely logits holding at least p; the rest set to `fill`."""
    return x.masked_fill(nucleus_mask(x, p, keep), fill)


def ngram_bans(ids: list[int], n: int) -> dict[int, int]:
    """Banned token -> where the earlier n-gram that it would repeat starts."""
    if n < 1 or len(ids) < n - 1:
        return {}
    tail = ids[len(ids) - (n - 1):]
    found: dict[int, int] = {}
    for i in range(len(ids) - n + 1):
        if ids[i:i + n - 1] == tail:
            found.setdefault(ids[i + n - 1], i)
    return found
