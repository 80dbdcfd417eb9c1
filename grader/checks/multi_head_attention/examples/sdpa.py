import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_head = config.n_head
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x):
        B, T, C = x.shape
        heads = [t.reshape(B, T, self.n_head, -1).transpose(1, 2)
                 for t in self.qkv(x).chunk(3, dim=-1)]
        y = F.scaled_dot_product_attention(*heads, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))
