"""The GPT: shapes, causality, the context limit, and the cache matching a full pass."""

from __future__ import annotations

import pytest
import torch

from grader.model.gpt import GPT, GPTConfig


@pytest.fixture
def model() -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=11, context_length=8, n_layer=2, n_head=2, n_embd=16)).eval()


def test_logits_have_one_row_per_position(model):
    logits = model(torch.randint(0, 11, (3, 5)))
    assert logits.shape == (3, 5, 11)


def test_a_position_never_sees_the_future(model):
    a = torch.tensor([[1, 2, 3, 4, 5, 6]])
    b = torch.tensor([[1, 2, 3, 9, 9, 9]])
    with torch.no_grad():
        assert torch.equal(model(a)[:, :3], model(b)[:, :3])
        assert not torch.equal(model(a)[:, 3], model(b)[:, 3])


def test_too_long_context_says_to_crop(model):
    with pytest.raises(ValueError, match="crop the context to its last 8 tokens"):
        model(torch.zeros(1, 9, dtype=torch.long))


def test_wrong_dtype_is_a_clear_error(model):
    with pytest.raises(ValueError, match="LongTensor"):
        model(torch.zeros(1, 3))


def test_cached_steps_match_the_full_forward_pass(model):
    tokens = torch.tensor([[4, 1, 7, 7, 2, 0, 10, 3]])
    with torch.no_grad():
        full = model(tokens)
        logits, cache = model.forward_with_cache(tokens[:, :3])
        steps = [logits]
        for t in range(3, 8):
            logits, cache = model.forward_with_cache(tokens[:, t:t + 1], cache)
            steps.append(logits)
    assert torch.allclose(torch.cat(steps, dim=1), full, atol=1e-5)
    assert cache[0][0].shape == (1, 2, 8, 8)  # (batch, heads, tokens, head size)


def attention_as_written_out(attn, x, cache=None):
    """Causal self-attention step by step, with the mask made by masked_fill."""
    import math

    B, T, C = x.shape
    size = C // attn.n_head
    q, k, v = (t.view(B, T, attn.n_head, size).transpose(1, 2)
               for t in attn.qkv(x).split(C, dim=2))
    if cache is not None:
        k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(size)
    allowed = torch.ones(T, k.shape[2], dtype=torch.bool).tril(k.shape[2] - T)
    y = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ v
    return attn.proj(y.transpose(1, 2).contiguous().view(B, T, C)), (k, v)


@pytest.mark.parametrize("n_head, n_embd, past, new", [(1, 4, 0, 5), (2, 16, 0, 8), (4, 16, 3, 4),
                                                       (2, 8, 7, 1)])
def test_attention_is_exactly_the_masked_fill_computation(n_head, n_embd, past, new):
    """The mask is added from a tensor made once per shape: bit for bit what the
    masked_fill written out gives, with and without a cache."""
    torch.manual_seed(n_head * 100 + past)
    model = GPT(GPTConfig(vocab_size=7, context_length=8, n_layer=1, n_head=n_head,
                          n_embd=n_embd)).eval()
    attn = model.blocks[0].attn
    for p in attn.parameters():
        torch.nn.init.normal_(p, std=0.5)
    x = torch.randn(2, new, n_embd)
    cache = None
    if past:
        cache = attention_as_written_out(attn, torch.randn(2, past, n_embd))[1]
    with torch.no_grad():
        got, (k, v) = attn(x, cache)
        expected, (k_expected, v_expected) = attention_as_written_out(attn, x, cache)
    assert torch.equal(got, expected)
    assert torch.equal(k, k_expected) and torch.equal(v, v_expected)
