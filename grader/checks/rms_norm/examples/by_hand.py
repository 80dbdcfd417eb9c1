import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.eps = 1e-5
        self.weight = nn.Parameter(torch.ones(config.n_embd))

    def forward(self, x):
        ms = x.pow(2).mean(dim=-1, keepdim=True)
        x = x * torch.rsqrt(ms + self.eps)
        return x * self.weight
