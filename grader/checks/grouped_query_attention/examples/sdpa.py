# torch's fused attention, which repeats the key/value heads itself (enable_gqa), with a
# boolean mask; RoPE as complex numbers on the halves' pairs.
import torch
import torch.nn.functional as F
from torch import nn


def apply_rope(x, start=0, base=10000.0):
    d = x.shape[-1]
    theta = base ** (-torch.arange(0, d // 2, dtype=torch.float64) * 2 / d)
    angles = torch.arange(start, start + x.shape[-2], dtype=torch.float64)[:, None] * theta
    turn = torch.polar(torch.ones_like(angles), angles).to(torch.complex64)
    pairs = torch.complex(x[..., : d // 2], x[..., d // 2:]) * turn
    return torch.cat([pairs.real, pairs.imag], dim=-1)


class GroupedQueryAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.h, self.kv = config.n_head, config.n_kv_head
        self.d = config.n_embd // config.n_head
        self.base = config.rope_base
        self.q_proj = nn.Linear(config.n_embd, self.h * self.d, bias=False)
        self.k_proj = nn.Linear(config.n_embd, self.kv * self.d, bias=False)
        self.v_proj = nn.Linear(config.n_embd, self.kv * self.d, bias=False)
        self.o_proj = nn.Linear(self.h * self.d, config.n_embd, bias=False)

    def forward(self, x, past=None):
        B, T, _ = x.shape
        q, k, v = (proj(x).unflatten(-1, (-1, self.d)).transpose(1, 2)
                   for proj in (self.q_proj, self.k_proj, self.v_proj))
        start = past[0].size(2) if past else 0
        q, k = apply_rope(q, start, self.base), apply_rope(k, start, self.base)
        if past:
            k, v = torch.cat((past[0], k), 2), torch.cat((past[1], v), 2)
        allowed = torch.ones(T, start + T, dtype=torch.bool).tril(start)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=True)
        return self.o_proj(y.transpose(1, 2).flatten(2)), (k, v)
