from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    from grader.model.config import LlamaConfig

Cache = tuple[torch.Tensor, torch.Tensor]


class RMSNorm(nn.Module):
    """Problem 29: the size of each vector set to 1, then a learned gain."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(config.n_embd))

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


class SwiGLU(nn.Module):
    """Problem 33: silu(gate) times up, then down."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.up_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.down_proj = nn.Linear(config.n_hidden, config.n_embd, bias=False)

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def apply_rope(x: TensorType["B", "H", "T", "head_dim", float], start: int = 0,
               base: float = 10000.0) -> TensorType["B", "H", "T", "head_dim", float]:
    """Problem 32: dimension i turned with i + head_dim / 2, by (start + t) * theta_i."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    positions = torch.arange(start, start + x.shape[-2], dtype=torch.float32)
    angles = torch.outer(positions, inv_freq)
    cos = torch.cat([angles, angles], dim=-1).cos()
    sin = torch.cat([angles, angles], dim=-1).sin()
    first, second = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat([-second, first], dim=-1) * sin


class GroupedQueryAttention(nn.Module):
    """Problem 34: n_head query heads reading n_kv_head key/value heads, with a cache."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.n_head, self.n_kv_head = config.n_head, config.n_kv_head
        self.head_dim = config.n_embd // config.n_head
        self.base = config.rope_base
        self.q_proj = nn.Linear(config.n_embd, config.n_head * self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.n_embd, config.n_kv_head * self.head_dim, bias=False)
        self.v_proj = nn.Linear(config.n_embd, config.n_kv_head * self.head_dim, bias=False)
        self.o_proj = nn.Linear(config.n_head * self.head_dim, config.n_embd, bias=False)

    def forward(self, x: TensorType["B", "T", "n_embd", float], past: Cache | None = None
                ) -> tuple[TensorType["B", "T", "n_embd", float], Cache]:
        B, T, _ = x.shape
        start = 0 if past is None else past[0].shape[2]
        q = self.q_proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, start, self.base), apply_rope(k, start, self.base)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        group = self.n_head // self.n_kv_head
        keys, values = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ keys.transpose(-2, -1) / math.sqrt(self.head_dim)
        allowed = torch.ones(T, start + T, dtype=torch.bool, device=x.device).tril(start)
        scores = scores.masked_fill(~allowed, float("-inf"))
        y = (F.softmax(scores, dim=-1) @ values).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(y), (k, v)


class Block(nn.Module):
    """Pre-norm: x + attn(attn_norm(x)), then x + mlp(mlp_norm(x))."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(config)
        self.attn = GroupedQueryAttention(config)
        self.mlp_norm = RMSNorm(config)
        self.mlp = SwiGLU(config)

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        # The attention returns its cache too; a whole window in one pass needs none.
        attended, _ = self.attn(self.attn_norm(x))
        x = x + attended
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    """Token ids in, next-token logits out: no position table, RoPE says where."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.n_embd)
        self.layers = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.norm = RMSNorm(config)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, context: TensorType["B", "T", int]
                ) -> TensorType["B", "T", "vocab_size", float]:
        x = self.embed_tokens(context)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))
