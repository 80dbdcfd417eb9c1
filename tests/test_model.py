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
