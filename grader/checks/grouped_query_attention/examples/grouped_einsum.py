# The query heads viewed in groups, one group a key head: no copy of the keys at all.
import math

import torch
from torch import nn


def apply_rope(x, start=0, base=10000.0):
    d = x.shape[-1]
    half = d // 2
    out = torch.empty_like(x)
    for i in range(half):
        theta = base ** (-2 * i / d)
        for t in range(x.shape[-2]):
            c, s = math.cos((start + t) * theta), math.sin((start + t) * theta)
            a, b = x[..., t, i], x[..., t, i + half]
            out[..., t, i] = a * c - b * s
            out[..., t, i + half] = a * s + b * c
    return out


class GroupedQueryAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        hd = config.n_embd // config.n_head
        self.q_proj = nn.Linear(config.n_embd, config.n_head * hd, bias=False)
        self.k_proj = nn.Linear(config.n_embd, config.n_kv_head * hd, bias=False)
        self.v_proj = nn.Linear(config.n_embd, config.n_kv_head * hd, bias=False)
        self.o_proj = nn.Linear(config.n_head * hd, config.n_embd, bias=False)

    def forward(self, x, past=None):
        c = self.config
        B, T, _ = x.shape
        hd, kv = c.n_embd // c.n_head, c.n_kv_head
        g = c.n_head // kv
        start = 0 if past is None else past[0].shape[2]
        q = apply_rope(self.q_proj(x).view(B, T, c.n_head, hd).transpose(1, 2), start,
                       c.rope_base)
        k = apply_rope(self.k_proj(x).view(B, T, kv, hd).transpose(1, 2), start, c.rope_base)
        v = self.v_proj(x).view(B, T, kv, hd).transpose(1, 2)
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        S = k.shape[2]
        q = q.reshape(B, kv, g, T, hd)  # query head h = (h // g, h % g)
        scores = torch.einsum("bkgtd,bksd->bkgts", q, k) / math.sqrt(hd)
        future = torch.arange(S)[None, :] > torch.arange(start, start + T)[:, None]
        scores = scores.masked_fill(future, float("-inf"))
        y = torch.einsum("bkgts,bksd->bkgtd", scores.softmax(-1), v)
        y = y.reshape(B, c.n_head, T, hd).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(y), (k, v)
