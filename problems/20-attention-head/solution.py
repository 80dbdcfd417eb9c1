from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F  # noqa: F401 - F.softmax is the usual way
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    # The config the grader builds your head with: you read config.n_embd and
    # config.n_head (also there: vocab_size, context_length, n_layer).
    from grader.model.config import GPTConfig


class Head(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        """One head of causal self-attention, of head_size = n_embd // n_head.

        Give it three layers, named as the grader loads its weights into them:
        self.query, self.key and self.value, each nn.Linear(config.n_embd,
        head_size), with its bias.
        """
        super().__init__()
        raise NotImplementedError("write Head.__init__(): see README.md")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "head_size", float]:
        """Each position's mix of the values of itself and the positions before it.

        x: (B, T, n_embd) floats, T <= context_length.

        Returns (B, T, head_size): softmax(q k^T / sqrt(head_size)), causally
        masked, times v.
        """
        raise NotImplementedError("write Head.forward(): see README.md")
