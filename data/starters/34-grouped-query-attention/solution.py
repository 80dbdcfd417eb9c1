from __future__ import annotations

import math  # noqa: F401 - math.sqrt for the scale
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F  # noqa: F401 - F.softmax
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    # The config the grader builds your module with: you read config.n_embd,
    # config.n_head, config.n_kv_head and config.rope_base.
    from grader.model.config import LlamaConfig


# Paste your apply_rope from problem 32 (rope) here, the one that passed, or replace
# this function with yours: apply_rope = solution_of("rope")().apply_rope, after
# `from grader.reuse import solution_of` (see README.md).
def apply_rope(x: TensorType["B", "H", "T", "head_dim", float], start: int = 0,
               base: float = 10000.0) -> TensorType["B", "H", "T", "head_dim", float]:
    raise NotImplementedError("paste your apply_rope from problem 32 (rope)")


class GroupedQueryAttention(nn.Module):
    def __init__(self, config: LlamaConfig) -> None:
        """Four projections, named as the grader loads their weights, all bias=False:
        self.q_proj = nn.Linear(n_embd, n_head * head_dim), self.k_proj and self.v_proj =
        nn.Linear(n_embd, n_kv_head * head_dim), self.o_proj = nn.Linear(n_head * head_dim,
        n_embd), with head_dim = n_embd // n_head."""
        super().__init__()
        raise NotImplementedError("write GroupedQueryAttention.__init__(): see README.md")

    def forward(self, x: TensorType["B", "T", "n_embd", float],
                past: tuple[torch.Tensor, torch.Tensor] | None = None
                ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """Causal grouped-query attention over the cached tokens and the new ones.

        x: (B, T, n_embd), the new tokens. past: None, or the (k, v) an earlier call
            returned, each (B, n_kv_head, T_past, head_dim); the new tokens are at
            positions T_past .. T_past + T - 1.
        Returns (y, (k, v)): y (B, T, n_embd), and the keys (turned by RoPE) and values
        of all T_past + T tokens, each (B, n_kv_head, T_past + T, head_dim).
        """
        raise NotImplementedError("write GroupedQueryAttention.forward(): see README.md")
