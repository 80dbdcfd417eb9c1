from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    from grader.model.config import LlamaConfig


def apply_rope(x: TensorType["B", "H", "T", "head_dim", float], start: int = 0,
               base: float = 10000.0) -> TensorType["B", "H", "T", "head_dim", float]:
    """Problem 32's rotary embeddings: dimension i turns with i + head_dim / 2."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    positions = torch.arange(start, start + x.shape[-2], dtype=torch.float32)
    angles = torch.outer(positions, inv_freq)
    cos = torch.cat([angles, angles], dim=-1).cos()
    sin = torch.cat([angles, angles], dim=-1).sin()
    first, second = x[..., : d // 2], x[..., d // 2:]
    return (x.float() * cos + torch.cat([-second, first], dim=-1).float() * sin).to(x.dtype)


class GroupedQueryAttention(nn.Module):
    """Causal attention whose key/value heads are shared by groups of query heads."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.n_head, self.n_kv_head = config.n_head, config.n_kv_head
        self.head_dim = config.n_embd // config.n_head
        self.base = config.rope_base
        self.q_proj = nn.Linear(config.n_embd, config.n_head * self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.n_embd, config.n_kv_head * self.head_dim, bias=False)
        self.v_proj = nn.Linear(config.n_embd, config.n_kv_head * self.head_dim, bias=False)
        self.o_proj = nn.Linear(config.n_head * self.head_dim, config.n_embd, bias=False)

    def forward(self, x: TensorType["B", "T", "n_embd", float],
                past: tuple[torch.Tensor, torch.Tensor] | None = None
                ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        # The new tokens come after the cached ones: their positions start there.
        start = 0 if past is None else past[0].shape[2]
        q, k = apply_rope(q, start, self.base), apply_rope(k, start, self.base)
        if past is not None:  # the cached keys were turned when they were new
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        # Query head h reads key/value head h // group: neighbouring query heads share one.
        group = self.n_head // self.n_kv_head
        keys, values = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = q @ keys.transpose(-2, -1) / math.sqrt(self.head_dim)
        # The query at position start + t sees keys 0 .. start + t.
        allowed = torch.ones(T, start + T, dtype=torch.bool).tril(diagonal=start)
        scores = scores.masked_fill(~allowed, float("-inf"))
        heads = F.softmax(scores, dim=-1) @ values
        return self.o_proj(heads.transpose(1, 2).reshape(B, T, -1)), (k, v)
