from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    from grader.model.config import GPTConfig


class CausalSelfAttention(nn.Module):
    """n_head attention heads side by side, then one projection of them all."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.n_head = config.n_head
        # The queries, keys and values of every head, in one layer.
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        B, T, C = x.shape
        size = C // self.n_head
        q, k, v = self.qkv(x).split(C, dim=2)
        # Channels h*size .. (h+1)*size belong to head h: (B, T, C) -> (B, n_head, T, size),
        # so that each head attends over time on its own.
        q, k, v = (t.view(B, T, self.n_head, size).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(size)
        allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
        y = F.softmax(scores, dim=-1) @ v
        # The heads' outputs side by side again, each position's in one row.
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)
