import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    """Each head on its own slice of the channels, in a loop, then joined."""

    def __init__(self, config):
        super().__init__()
        self.n_head = config.n_head
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x):
        T, C = x.shape[1], x.shape[2]
        size = C // self.n_head
        q, k, v = self.qkv(x).split(C, dim=-1)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        outputs = []
        for h in range(self.n_head):
            part = slice(h * size, (h + 1) * size)
            scores = q[..., part] @ k[..., part].transpose(1, 2) / math.sqrt(size)
            weights = torch.softmax(scores.masked_fill(future, -math.inf), dim=-1)
            outputs.append(weights @ v[..., part])
        return self.proj(torch.cat(outputs, dim=-1))
