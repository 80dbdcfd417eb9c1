from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    from grader.model.config import GPTConfig


class Head(nn.Module):
    """One head of causal self-attention."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        head_size = config.n_embd // config.n_head
        # With biases: the shipped model's attention layer has them, and this
        # head is graded with one head's slice of that layer.
        self.query = nn.Linear(config.n_embd, head_size)
        self.key = nn.Linear(config.n_embd, head_size)
        self.value = nn.Linear(config.n_embd, head_size)

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "head_size", float]:
        T = x.shape[1]
        q, k, v = self.query(x), self.key(x), self.value(x)
        # Dot products grow like sqrt(head_size); dividing keeps the softmax
        # from saturating on one position.
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        # Query t may look at keys 0..t only: the future is not known yet.
        allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
        # Each row (one query) is a distribution over the keys it may see.
        return F.softmax(scores, dim=-1) @ v
