"""Hugging Face transformers' Llama: inverse frequencies from an int64 arange, the
angles as a matmul of frequencies and positions, rotate_half on the two halves."""

import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Solution:
    def apply_rope(self, x, start=0, base=10000.0):
        dim = x.shape[-1]
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        position_ids = torch.arange(start, start + x.shape[-2])[None, :]
        inv_freq_expanded = inv_freq[None, :, None].float()
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos()[:, None]
        sin = emb.sin()[:, None]
        return (x * cos) + (rotate_half(x) * sin)
