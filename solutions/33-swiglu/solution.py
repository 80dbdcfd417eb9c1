from __future__ import annotations

from typing import TYPE_CHECKING

import torch.nn.functional as F
from torch import nn
from torchtyping import TensorType

if TYPE_CHECKING:
    from grader.model.config import LlamaConfig


class SwiGLU(nn.Module):
    """The gated feed-forward layer of Llama and its kin: silu(gate) times up, then down."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.up_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.down_proj = nn.Linear(config.n_hidden, config.n_embd, bias=False)

    def forward(self, x: TensorType["B", "T", "n_embd", float]
                ) -> TensorType["B", "T", "n_embd", float]:
        # The gate's branch alone goes through silu; it scales the up branch entry by entry.
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
