"""Written from the paper's matrix: a 2x2 rotation per pair and position, the angles
in float64 and cast, applied with einsum."""

import math

import torch


class Solution:
    def apply_rope(self, x, start=0, base=10000.0):
        B, H, T, D = x.shape
        half = D // 2
        R = torch.zeros(T, half, 2, 2, dtype=torch.float64)
        for t in range(T):
            for i in range(half):
                angle = (start + t) * base ** (-2 * i / D)
                c, s = math.cos(angle), math.sin(angle)
                R[t, i] = torch.tensor([[c, -s], [s, c]], dtype=torch.float64)
        pairs = torch.stack([x[..., :half], x[..., half:]], dim=-1).double()  # (B, H, T, half, 2)
        turned = torch.einsum("tiuv,nhtiv->nhtiu", R, pairs)
        return torch.cat([turned[..., 0], turned[..., 1]], dim=-1).to(x.dtype)
