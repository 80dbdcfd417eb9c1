from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    from grader.model.llama import LlamaConfig

Cache = tuple[torch.Tensor, torch.Tensor]


class RMSNorm(nn.Module):
    """Problem 29, by division: x over its root mean square, then the gain."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(config.n_embd))

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        root_mean_square = torch.sqrt((x * x).sum(dim=-1, keepdim=True) / x.shape[-1] + self.eps)
        return self.weight * (x / root_mean_square)


class SwiGLU(nn.Module):
    """Problem 33, with silu written out as gate * sigmoid(gate)."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.up_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.down_proj = nn.Linear(config.n_hidden, config.n_embd, bias=False)

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        gate, up = self.gate_proj(x), self.up_proj(x)
        return self.down_proj(gate * torch.sigmoid(gate) * up)


def apply_rope(x: TensorType["B", "H", "T", "head_dim", float], start: int = 0,
               base: float = 10000.0) -> TensorType["B", "H", "T", "head_dim", float]:
    """Problem 32 by complex numbers: the pair (i, i + head_dim / 2) is one complex
    number, multiplied by e^(i * position * theta_i), angles taken in float64."""
    half = x.shape[-1] // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) * 2 / (2 * half))
    positions = torch.arange(start, start + x.shape[-2], dtype=torch.float64)
    turn = torch.polar(torch.ones(x.shape[-2], half, dtype=torch.float64),
                       positions[:, None] * theta[None, :])
    pairs = torch.complex(x[..., :half].double(), x[..., half:].double()) * turn
    return torch.cat([pairs.real, pairs.imag], dim=-1).to(x.dtype)


class GroupedQueryAttention(nn.Module):
    """Problem 34 without copying the key/value heads: the query heads are grouped
    by the key/value head they read, and each group meets its keys by einsum."""

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
        heads = self.q_proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        heads, k = apply_rope(heads, start, self.base), apply_rope(k, start, self.base)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        # Query head h reads key/value head h // group: consecutive heads share one.
        grouped = heads.view(B, self.n_kv_head, self.n_head // self.n_kv_head, T, self.head_dim)
        scores = torch.einsum("bkgtd,bksd->bkgts", grouped, k) / math.sqrt(self.head_dim)
        query_at = torch.arange(start, start + T, device=x.device)[:, None]
        key_at = torch.arange(start + T, device=x.device)[None, :]
        scores = scores.masked_fill(key_at > query_at, float("-inf"))
        mixed = torch.einsum("bkgts,bksd->bkgtd", scores.softmax(dim=-1), v)
        y = mixed.reshape(B, self.n_head, T, self.head_dim).transpose(1, 2).reshape(B, T, -1)
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
        h = self.attn_norm(x)
        attended, _ = self.attn(h)
        x = x + attended
        h = self.mlp_norm(x)
        x = x + self.mlp(h)
        return x


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
        x = self.norm(x)
        logits = self.lm_head(x)
        return logits
