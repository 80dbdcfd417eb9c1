"""A small Llama-style decoder: RMSNorm, rotary positions, SwiGLU and grouped-query attention.

Track 4's modern GPT (problems 29 and 32-35) is written against this configuration; the
parameter names every problem fixes are listed in its statements. `Llama(config)` has the
same contract as `GPT`: `model(context)` takes token ids (B, T) and returns logits
(B, T, vocab_size), and `forward_with_cache` carries each layer's keys and values, so the
loss, the training step, the loop and the samplers written for the GPT run on it unchanged.

What differs from GPT-2 (grader/model/gpt.py), each as current open models have it:
- RMSNorm instead of LayerNorm: no mean taken away, no bias.
- No position table: queries and keys are turned by an angle that grows with the position
  (RoPE), so attention scores depend on how far apart two tokens are.
- SwiGLU instead of the GELU MLP: a gate, silu(gate(x)), multiplies a second projection.
- Grouped-query attention: fewer key/value heads than query heads, so the KV cache is smaller.
- No biases anywhere, and an output head of its own (not tied to the embedding).
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from grader.model.config import LlamaConfig
from grader.model.gpt import Decoder, KVCache, causal_mask


class RMSNorm(nn.Module):
    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.eps = config.norm_eps
        self.weight = nn.Parameter(torch.ones(config.n_embd))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def apply_rope(x: torch.Tensor, start: int, base: float) -> torch.Tensor:
    """Turn each pair (i, i + head_dim/2) of x (B, H, T, head_dim) by (start + t) * theta_i.

    The halves are paired as in Hugging Face's Llama (problem 32's statement).
    """
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    positions = torch.arange(start, start + x.shape[-2], dtype=torch.float32)
    angles = torch.outer(positions, inv_freq)
    emb = torch.cat([angles, angles], dim=-1)
    first, second = x[..., : d // 2], x[..., d // 2:]
    return x * emb.cos() + torch.cat([-second, first], dim=-1) * emb.sin()


class GroupedQueryAttention(nn.Module):
    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        assert config.n_embd % config.n_head == 0 and config.n_head % config.n_kv_head == 0
        self.n_head, self.n_kv_head = config.n_head, config.n_kv_head
        self.head_dim, self.rope_base = config.head_dim, config.rope_base
        self.q_proj = nn.Linear(config.n_embd, config.n_head * self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.n_embd, config.n_kv_head * self.head_dim, bias=False)
        self.v_proj = nn.Linear(config.n_embd, config.n_kv_head * self.head_dim, bias=False)
        self.o_proj = nn.Linear(config.n_head * self.head_dim, config.n_embd, bias=False)

    def forward(self, x: torch.Tensor, past: KVCache | None = None
                ) -> tuple[torch.Tensor, KVCache]:
        B, T, _ = x.shape
        start = 0 if past is None else past[0].shape[2]
        q = self.q_proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        # The cache keeps keys already turned: a key's angle depends on its own position only.
        q, k = apply_rope(q, start, self.rope_base), apply_rope(k, start, self.rope_base)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        # Query head h reads key/value head h // group: neighbouring query heads share one.
        group = self.n_head // self.n_kv_head
        keys, values = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ keys.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores + causal_mask(T, keys.shape[2], x.device)
        y = (F.softmax(scores, dim=-1) @ values).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(y), (k, v)


class SwiGLU(nn.Module):
    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.up_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.down_proj = nn.Linear(config.n_hidden, config.n_embd, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaBlock(nn.Module):
    """Pre-norm block: x + attn(attn_norm(x)), then x + mlp(mlp_norm(x))."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(config)
        self.attn = GroupedQueryAttention(config)
        self.mlp_norm = RMSNorm(config)
        self.mlp = SwiGLU(config)

    def forward(self, x: torch.Tensor, past: KVCache | None = None
                ) -> tuple[torch.Tensor, KVCache]:
        attended, cache = self.attn(self.attn_norm(x), past)
        x = x + attended
        return x + self.mlp(self.mlp_norm(x)), cache


class Llama(Decoder):
    def __init__(self, config: LlamaConfig) -> None:
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.n_embd)
        self.layers = nn.ModuleList(LlamaBlock(config) for _ in range(config.n_layer))
        self.norm = RMSNorm(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.init_weights()

    def forward_with_cache(self, context: torch.Tensor, cache: list[KVCache] | None = None
                           ) -> tuple[torch.Tensor, list[KVCache]]:
        """As GPT.forward_with_cache: `context` holds only the tokens after the cached ones."""
        self.past_of(context, cache)  # no position table: RoPE turns by the past itself
        x, new_cache = self.through(self.layers, self.embed_tokens(context), cache)
        return self.lm_head(self.norm(x)), new_cache
