"""Problems 33 and 34's references against Hugging Face transformers' Llama layers.

LlamaMLP and LlamaAttention are built from a random configuration (nothing downloaded),
the reference's weights copied in by the names both use, and run on the same inputs:
the MLP alone, the attention on a whole sequence with its own rotary embedding and a
causal mask, and the reference's cached calls against transformers' one pass. Skipped
when transformers is missing. Also, without it: the reference after a cache is the
reference on the whole sequence, and its cached keys are turned.
"""

from __future__ import annotations

import pytest
import torch
from conftest import reference_module

from grader.model.llama import LlamaConfig

CONFIGS = [LlamaConfig(vocab_size=7, n_head=4, n_kv_head=kv, n_embd=32, n_hidden=48,
                       rope_base=base) for kv, base in ((2, 10000.0), (1, 500.0), (4, 500000.0))]


def swiglu(config: LlamaConfig) -> torch.nn.Module:
    return reference_module("33-swiglu").SwiGLU(config).eval()


def attention(config: LlamaConfig) -> torch.nn.Module:
    return reference_module("34-grouped-query-attention").GroupedQueryAttention(config).eval()


def seeded(module: torch.nn.Module, seed: int) -> torch.nn.Module:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) / p.shape[-1] ** 0.5 * 1.5)
    return module


def hf_config(transformers, config: LlamaConfig):
    made = transformers.LlamaConfig(
        vocab_size=config.vocab_size, hidden_size=config.n_embd,
        intermediate_size=config.n_hidden, num_hidden_layers=1,
        num_attention_heads=config.n_head, num_key_value_heads=config.n_kv_head,
        max_position_embeddings=64, rope_theta=config.rope_base, attention_bias=False,
        mlp_bias=False, hidden_act="silu", attn_implementation="eager")
    if isinstance(getattr(made, "rope_parameters", None), dict):
        made.rope_parameters["rope_theta"] = config.rope_base  # transformers 5 keeps it here
    return made


def inputs(config: LlamaConfig, length: int, seed: int) -> torch.Tensor:
    return torch.randn(2, length, config.n_embd, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("config", CONFIGS[:1])
def test_swiglu_is_transformers_llama_mlp(config: LlamaConfig) -> None:
    transformers = pytest.importorskip("transformers")
    from transformers.models.llama.modeling_llama import LlamaMLP

    ours = seeded(swiglu(config), 0)
    theirs = LlamaMLP(hf_config(transformers, config)).eval()
    theirs.load_state_dict(ours.state_dict())  # the same names: gate_proj, up_proj, down_proj
    x = inputs(config, 9, 1)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), theirs(x), rtol=1e-5, atol=1e-5)


def hf_attention(transformers, config: LlamaConfig, x: torch.Tensor, ours: torch.nn.Module):
    """transformers' LlamaAttention with our weights on all of x at positions 0 onwards:
    its output, and its keys after the rotary embedding, (B, n_kv_head, T, head_dim)."""
    from transformers.models.llama import modeling_llama

    made = hf_config(transformers, config)
    layer = modeling_llama.LlamaAttention(made, layer_idx=0).eval()
    layer.load_state_dict(ours.state_dict())  # q_proj, k_proj, v_proj, o_proj, as ours
    B, T, _ = x.shape
    cos, sin = modeling_llama.LlamaRotaryEmbedding(made)(x, torch.arange(T)[None].expand(B, T))
    mask = torch.full((T, T), float("-inf")).triu(1)[None, None].expand(B, 1, T, T)
    with torch.no_grad():
        y = layer(x, position_embeddings=(cos, sin), attention_mask=mask)[0]
        hd = config.head_dim
        q = layer.q_proj(x).view(B, T, -1, hd).transpose(1, 2)
        k = layer.k_proj(x).view(B, T, -1, hd).transpose(1, 2)
        _, turned = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
    return y, turned


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"kv{c.n_kv_head}-base{c.rope_base:g}")
def test_grouped_query_attention_is_transformers_llama_attention(config: LlamaConfig) -> None:
    transformers = pytest.importorskip("transformers")
    ours = seeded(attention(config), 2)
    x = inputs(config, 11, 3)
    want_y, want_k = hf_attention(transformers, config, x, ours)
    with torch.no_grad():
        y, (k, v) = ours(x)
        first, past = ours(x[:, :7])
        rest, (k_after, _) = ours(x[:, 7:], past)
    torch.testing.assert_close(y, want_y, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(k, want_k, rtol=1e-5, atol=1e-5)
    # A prefix, then the rest with its cache: transformers' rows of the one pass.
    torch.testing.assert_close(torch.cat([first, rest], dim=1), want_y, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(k_after, want_k, rtol=1e-5, atol=1e-5)


def test_the_reference_after_a_cache_is_the_reference_on_the_whole() -> None:
    config = CONFIGS[0]
    ours = seeded(attention(config), 4)
    x = inputs(config, 10, 5)
    with torch.no_grad():
        whole, (k, v) = ours(x)
        outputs, past = [], None
        for t in range(10):  # one token at a time, from an empty start
            y, past = ours(x[:, t:t + 1], past)
            outputs.append(y)
    torch.testing.assert_close(torch.cat(outputs, dim=1), whole, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(past[0], k, rtol=1e-5, atol=1e-6)
    assert k.shape == (2, config.n_kv_head, 10, config.head_dim)
    # The cache's keys are turned: only the first, at position 0, is k_proj's output as it is.
    raw = ours.k_proj(x).view(2, 10, config.n_kv_head, -1).transpose(1, 2)
    torch.testing.assert_close(k[:, :, 0], raw[:, :, 0])
    assert not torch.allclose(k[:, :, 1:], raw[:, :, 1:], atol=1e-3)
    torch.testing.assert_close(v, ours.v_proj(x).view(2, 10, config.n_kv_head, -1).transpose(1, 2))
