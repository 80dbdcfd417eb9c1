# The three weights used directly, with einsum, and the gate computed in float64.
import torch
from torch import nn


class SwiGLU(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.up_proj = nn.Linear(config.n_embd, config.n_hidden, bias=False)
        self.down_proj = nn.Linear(config.n_hidden, config.n_embd, bias=False)

    def forward(self, x):
        gate = torch.einsum("btc,hc->bth", x, self.gate_proj.weight).double()
        up = torch.einsum("btc,hc->bth", x, self.up_proj.weight)
        hidden = (gate * torch.sigmoid(gate)).float() * up
        return torch.einsum("bth,ch->btc", hidden, self.down_proj.weight)
