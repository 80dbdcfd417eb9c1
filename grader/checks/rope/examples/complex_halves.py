"""Meta's complex form, on the halves: pair i is the complex number x1[i] + x2[i] j,
multiplied by e^(j p theta_i) from torch.polar."""

import torch


class Solution:
    def apply_rope(self, x, start=0, base=10000.0):
        d = x.shape[-1]
        freqs = 1.0 / (base ** (torch.arange(0, d, 2)[: d // 2].float() / d))
        t = torch.arange(start, start + x.shape[2], dtype=torch.float32)
        freqs_cis = torch.polar(torch.ones(len(t), d // 2), torch.outer(t, freqs))
        x1, x2 = x.float().chunk(2, dim=-1)
        x_c = torch.view_as_complex(torch.stack([x1, x2], dim=-1).contiguous())
        out = torch.view_as_real(x_c * freqs_cis)
        return torch.cat([out[..., 0], out[..., 1]], dim=-1).type_as(x)
