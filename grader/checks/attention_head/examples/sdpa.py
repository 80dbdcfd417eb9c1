import torch.nn.functional as F
from torch import nn


class Head(nn.Module):
    def __init__(self, config):
        super().__init__()
        size = config.n_embd // config.n_head
        self.query, self.key, self.value = (nn.Linear(config.n_embd, size) for _ in range(3))

    def forward(self, x):
        return F.scaled_dot_product_attention(self.query(x), self.key(x), self.value(x),
                                              is_causal=True)
