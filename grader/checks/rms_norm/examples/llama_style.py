import torch
from torch import nn


class RMSNorm(nn.Module):
    """As Llama's reference code writes it: normalised in float32, cast back."""

    def __init__(self, config, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(config.n_embd))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.double()).type_as(x)
        return output * self.weight
