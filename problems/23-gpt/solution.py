from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F  # noqa: F401 - F.softmax and F.gelu
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    # The config the grader builds your GPT with: vocab_size, context_length,
    # n_layer, n_head and n_embd.
    from grader.model.config import GPTConfig


# Paste your CausalSelfAttention, MLP and Block from transformer-block below, or
# replace the three classes with yours: Block = solution_of("transformer-block",
# name="Block"), after `from grader.reuse import solution_of` (see README.md).
class CausalSelfAttention(nn.Module):
    # Paste your CausalSelfAttention from transformer-block here, the one that passed.
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        raise NotImplementedError("paste your CausalSelfAttention from transformer-block")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        raise NotImplementedError("paste your CausalSelfAttention from transformer-block")


class MLP(nn.Module):
    # Paste your MLP from transformer-block here, the one that passed.
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        raise NotImplementedError("paste your MLP from transformer-block")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        raise NotImplementedError("paste your MLP from transformer-block")


class Block(nn.Module):
    # Paste your Block from transformer-block here, the one that passed.
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        raise NotImplementedError("paste your Block from transformer-block")

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        raise NotImplementedError("paste your Block from transformer-block")


class GPT(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        """The whole model, its parts named as the grader loads their weights:
        self.token_embedding = nn.Embedding(vocab_size, n_embd),
        self.position_embedding = nn.Embedding(context_length, n_embd),
        self.blocks = nn.ModuleList of n_layer Block(config),
        self.ln_f = nn.LayerNorm(n_embd),
        self.head = nn.Linear(n_embd, vocab_size, bias=False)."""
        super().__init__()
        raise NotImplementedError("write GPT.__init__(): see README.md")

    def forward(self, context: TensorType["B", "T", int]
                ) -> TensorType["B", "T", "vocab_size", float]:
        """Logits for the token after each position: (B, T) ids to (B, T, vocab_size).

        context: a (B, T) LongTensor, 1 <= T <= context_length.
        """
        raise NotImplementedError("write GPT.forward(): see README.md")
