from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F  # noqa: F401 - F.softmax is the usual way
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    # The config the grader builds your layer with: you read config.n_embd and
    # config.n_head (also there: vocab_size, context_length, n_layer).
    from grader.model.config import GPTConfig


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        """n_head heads of causal self-attention side by side, and a projection.

        Give it two layers, named as the grader loads its weights into them:
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd), the queries,
        keys and values of every head at once, and self.proj =
        nn.Linear(config.n_embd, config.n_embd), both with their biases.
        """
        super().__init__()
        raise NotImplementedError("write CausalSelfAttention.__init__(): see README.md")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        """Every head's attention, side by side, through the projection.

        x: (B, T, n_embd) floats, T <= context_length.

        Returns (B, T, n_embd).
        """
        raise NotImplementedError("write CausalSelfAttention.forward(): see README.md")
