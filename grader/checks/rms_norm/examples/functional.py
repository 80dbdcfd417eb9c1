import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_embd = config.n_embd
        self.weight = nn.Parameter(torch.ones(config.n_embd))

    def forward(self, x):
        return F.rms_norm(x, (self.n_embd,), self.weight, eps=1e-5)
