import torch
from torchtyping import TensorType


class Solution:
    def apply_rope(self, x: TensorType["B", "H", "T", "head_dim", float], start: int = 0,
                   base: float = 10000.0) -> TensorType["B", "H", "T", "head_dim", float]:
        d = x.shape[-1]
        # One frequency per pair of dimensions, from 1 down to nearly 1 / base.
        inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
        # The first token's position is `start`: what a KV cache already holds.
        positions = torch.arange(start, start + x.shape[-2], dtype=torch.float32)
        angles = torch.outer(positions, inv_freq)  # (T, d / 2)
        # Dimension i is paired with i + d / 2, so each half sees every frequency once.
        cos = torch.cat([angles, angles], dim=-1).cos()
        sin = torch.cat([angles, angles], dim=-1).sin()
        first, second = x[..., : d // 2], x[..., d // 2:]
        rotated_half = torch.cat([-second, first], dim=-1)
        return (x.float() * cos + rotated_half.float() * sin).to(x.dtype)
