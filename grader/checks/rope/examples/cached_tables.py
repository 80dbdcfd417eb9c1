"""A module-style cache: cos and sin tables built once for a maximum length (grown
when a later position is asked for) and sliced at start."""

import torch


class Solution:
    def __init__(self):
        self.tables = {}

    def table(self, d, base, length):
        key = (d, base)
        if key not in self.tables or self.tables[key][0].shape[0] < length:
            size = max(length, 2048)
            inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
            angles = torch.arange(size, dtype=torch.float32)[:, None] * inv_freq[None, :]
            angles = angles.repeat(1, 2)
            self.tables[key] = (angles.cos(), angles.sin())
        return self.tables[key]

    def apply_rope(self, x, start=0, base=10000.0):
        T, d = x.shape[-2], x.shape[-1]
        cos, sin = self.table(d, base, start + T)
        cos, sin = cos[start : start + T], sin[start : start + T]
        x1, x2 = x[..., : d // 2], x[..., d // 2 :]
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin
