import math

import torch
from torch import nn


class Head(nn.Module):
    """Scores in float64, the mask added as a matrix of 0 and -inf."""

    def __init__(self, config):
        super().__init__()
        self.head_size = config.n_embd // config.n_head
        self.query = nn.Linear(config.n_embd, self.head_size)
        self.key = nn.Linear(config.n_embd, self.head_size)
        self.value = nn.Linear(config.n_embd, self.head_size)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.query(x).double(), self.key(x).double(), self.value(x).double()
        future = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
        scores = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(self.head_size) + future
        weights = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
        weights = weights / weights.sum(dim=-1, keepdim=True)
        return (weights @ v).float()
