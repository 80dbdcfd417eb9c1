"""The reference on small examples worked out by hand."""

from __future__ import annotations

import torch
from conftest import reference_solution

INF = float("-inf")


def reference():
    return reference_solution("12-no-repeat-ngram")


def ban(logits, token_ids, n):
    return reference().no_repeat_ngram(logits, token_ids, n)


def test_trigram_at_the_very_start_bans_its_last_token() -> None:
    # 1 2 | 3 1 2: the last two tokens are 1 2, and 1 2 3 starts at position 0.
    x = torch.tensor([0.5, -1.0, 2.0, 0.25, 3.0])
    assert torch.equal(ban(x, [1, 2, 3, 1, 2], 3), torch.tensor([0.5, -1.0, 2.0, INF, 3.0]))


def test_bigram_bans_every_follower_of_the_last_token() -> None:
    # 0 is followed by 1 and by 2 earlier on; the text ends with 0.
    x = torch.zeros(4)
    assert torch.equal(ban(x, [0, 1, 0, 2, 0], 2), torch.tensor([0.0, INF, INF, 0.0]))


def test_unigram_bans_every_token_seen() -> None:
    x = torch.arange(5, dtype=torch.float32)
    assert torch.equal(ban(x, [4, 4, 2], 1), torch.tensor([0.0, 1.0, INF, 3.0, INF]))


def test_too_few_tokens_bans_nothing() -> None:
    x = torch.tensor([1.0, 2.0, 3.0])
    assert torch.equal(ban(x, [1, 2], 4), x)  # fewer than n - 1 = 3 tokens
    assert torch.equal(ban(x, [1, 2], 3), x)  # exactly n - 1: no complete trigram yet
    assert torch.equal(ban(x, [], 2), x)


def test_a_batch_uses_each_rows_own_ids() -> None:
    x = torch.zeros(2, 3)
    ids = torch.tensor([[0, 1, 0], [2, 2, 0]])
    # Row 0 ends with 0, and 0 1 occurred: ban 1. Row 1 ends with 0, which never led anywhere.
    assert torch.equal(ban(x, ids, 2), torch.tensor([[0.0, INF, 0.0], [0.0, 0.0, 0.0]]))


def test_input_kept_and_dtype_kept() -> None:
    x = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
    before = x.clone()
    out = ban(x, [0, 0], 2)
    assert torch.equal(x, before)
    assert out.dtype == torch.float64
    assert torch.equal(out, torch.tensor([INF, 0.2, 0.3], dtype=torch.float64))
