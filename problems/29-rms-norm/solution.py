from __future__ import annotations

from typing import TYPE_CHECKING

import torch  # noqa: F401 - torch.rsqrt, torch.ones
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    # The config the grader builds your module with: you read config.n_embd.
    from grader.model.config import GPTConfig


class RMSNorm(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        """RMSNorm over the last dimension, of width config.n_embd, with eps = 1e-5.

        Give it one parameter, named as the grader loads its weights into it:
        self.weight, of shape (n_embd,) (ones, to begin with). No bias.
        """
        super().__init__()
        raise NotImplementedError("write RMSNorm.__init__(): see README.md")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        """x / sqrt(mean(x ** 2 over the last dimension) + eps) * weight.

        x: (B, T, n_embd) floats. Returns the same shape.
        """
        raise NotImplementedError("write RMSNorm.forward(): see README.md")
