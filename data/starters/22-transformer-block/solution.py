from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F  # noqa: F401 - F.softmax and F.gelu
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    # The config the grader builds your block with: you read config.n_embd and
    # config.n_head (also there: vocab_size, context_length, n_layer).
    from grader.model.config import GPTConfig


class CausalSelfAttention(nn.Module):
    # Paste your CausalSelfAttention from multi-head-attention here, the one that
    # passed (the block's checks load the shipped weights into it too), or replace
    # this class with yours: CausalSelfAttention = solution_of(
    # "multi-head-attention", name="CausalSelfAttention"), after
    # `from grader.reuse import solution_of` (see README.md).
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        raise NotImplementedError("paste your CausalSelfAttention from multi-head-attention")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        raise NotImplementedError("paste your CausalSelfAttention from multi-head-attention")


class MLP(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        """Two layers: self.fc = nn.Linear(n_embd, 4 * n_embd) and
        self.proj = nn.Linear(4 * n_embd, n_embd), with their biases."""
        super().__init__()
        raise NotImplementedError("write MLP.__init__(): see README.md")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        """fc, then F.gelu (exact, not its tanh approximation), then proj."""
        raise NotImplementedError("write MLP.forward(): see README.md")


class Block(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        """A transformer block, its parts named as the grader loads their weights:
        self.ln_1 = nn.LayerNorm(n_embd), self.attn = CausalSelfAttention(config),
        self.ln_2 = nn.LayerNorm(n_embd), self.mlp = MLP(config)."""
        super().__init__()
        raise NotImplementedError("write Block.__init__(): see README.md")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        """Pre-LayerNorm: x + attn(ln_1(x)), then that plus mlp(ln_2(of it)).

        x: (B, T, n_embd) floats, T <= context_length. Returns (B, T, n_embd).
        """
        raise NotImplementedError("write Block.forward(): see README.md")
