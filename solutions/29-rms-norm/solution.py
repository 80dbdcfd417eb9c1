from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    from grader.model.config import GPTConfig


class RMSNorm(nn.Module):
    """Root-mean-square normalisation with a learned gain, as Llama's."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(config.n_embd))

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        # No mean taken away and no bias: only the size of each vector is set to 1.
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
