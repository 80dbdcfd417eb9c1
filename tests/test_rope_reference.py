"""Problem 32's reference against other statements of RoPE: Meta's Llama code (complex
numbers on neighbouring pairs), read on the halves through the permutation Hugging
Face applies when it converts Meta's checkpoints; Hugging Face transformers' Llama
rotary embedding where it is installed; and the properties that make RoPE what it
is (turns keep lengths, add up, and leave scores depending on distance only)."""

from __future__ import annotations

import pytest
import torch
from conftest import reference_solution


def reference():
    return reference_solution("32-rope").apply_rope


def meta_rope(x: torch.Tensor, start: int, base: float) -> torch.Tensor:
    """meta-llama/llama's precompute_freqs_cis and apply_rotary_emb, on (B, H, T, D)
    with neighbouring dimensions (2i, 2i + 1) as one complex number."""
    d, length = x.shape[-1], x.shape[-2]
    freqs = 1.0 / (base ** (torch.arange(0, d, 2)[: (d // 2)].float() / d))
    t = torch.arange(start, start + length, dtype=torch.float32)
    freqs_cis = torch.polar(torch.ones(length, d // 2), torch.outer(t, freqs))
    x_ = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(-2).type_as(x)


def halves_to_pairs(d: int) -> torch.Tensor:
    """The order that puts dimension i next to i + d / 2: 0, d/2, 1, d/2 + 1, ..."""
    return torch.stack([torch.arange(d // 2), torch.arange(d // 2) + d // 2], dim=-1).flatten()


@pytest.mark.parametrize(("shape", "start", "base"), [
    ((1, 4, 7, 16), 0, 10000.0), ((2, 3, 5, 8), 40, 10000.0), ((1, 2, 9, 64), 250, 500000.0),
    ((1, 1, 3, 2), 7, 100.0),
])
def test_the_reference_is_metas_rope_on_the_halves(shape, start, base) -> None:
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    order = halves_to_pairs(shape[-1])
    back = torch.argsort(order)
    meta = meta_rope(x[..., order], start, base)[..., back]
    torch.testing.assert_close(reference()(x, start, base), meta, rtol=1e-5, atol=1e-4)


def test_neighbouring_pairs_are_another_function() -> None:
    # Without the permutation the two pairings disagree: the statement's choice matters.
    x = torch.randn(1, 1, 4, 8, generator=torch.Generator().manual_seed(1))
    assert not torch.allclose(reference()(x, 3, 10000.0), meta_rope(x, 3, 10000.0), atol=1e-2)


def test_turns_keep_lengths_and_add_up() -> None:
    rope = reference()
    x = torch.randn(2, 2, 6, 16, generator=torch.Generator().manual_seed(2))
    torch.testing.assert_close(rope(x, 5, 10000.0).norm(dim=-1), x.norm(dim=-1))
    # Turns add up: row t turned from positions 3 and then 4 on, (7 + 2t) theta in all,
    # is row t turned from 0 and then 7 on.
    torch.testing.assert_close(rope(rope(x, 3, 10000.0), 4, 10000.0),
                               rope(rope(x, 0, 10000.0), 7, 10000.0), rtol=1e-4, atol=1e-4)


def test_scores_depend_on_distance_only() -> None:
    rope = reference()
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(1, 2, 8, 16, generator=g), torch.randn(1, 2, 8, 16, generator=g)
    scores = rope(q, 0, 10000.0) @ rope(k, 0, 10000.0).transpose(-2, -1)
    moved = rope(q, 37, 10000.0) @ rope(k, 37, 10000.0).transpose(-2, -1)
    torch.testing.assert_close(scores, moved, rtol=1e-4, atol=1e-4)
    assert not torch.allclose(scores, q @ k.transpose(-2, -1), atol=1e-2)


@pytest.mark.parametrize(("start", "base"), [(0, 10000.0), (30, 10000.0), (100, 500000.0)])
def test_the_reference_is_transformers_llama_rope(start, base) -> None:
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    from transformers import LlamaConfig

    heads, head_dim, length = 4, 16, 7
    config = LlamaConfig(hidden_size=heads * head_dim, num_attention_heads=heads,
                         num_key_value_heads=heads, max_position_embeddings=512,
                         rope_theta=base)
    if isinstance(getattr(config, "rope_parameters", None), dict):
        config.rope_parameters["rope_theta"] = base  # transformers 5 keeps it here
    rotary = llama.LlamaRotaryEmbedding(config=config)
    g = torch.Generator().manual_seed(4)
    q, k = torch.randn(1, heads, length, head_dim, generator=g), torch.randn(
        1, heads, length, head_dim, generator=g)
    positions = torch.arange(start, start + length)[None, :]
    cos, sin = rotary(q, positions)
    q_hf, k_hf = llama.apply_rotary_pos_emb(q, k, cos, sin)
    rope = reference()
    torch.testing.assert_close(rope(q, start, base), q_hf, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(rope(k, start, base), k_hf, rtol=1e-5, atol=1e-5)
