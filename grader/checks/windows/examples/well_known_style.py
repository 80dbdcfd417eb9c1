import torch


class Solution:
    def window(self, data: torch.Tensor, context_length: int, i: int):
        if i < 0 or i >= len(data) - context_length:
            raise ValueError(f"no window {i} in {len(data)} tokens")
        x = data[i:i + context_length]
        y = data[i + 1:i + context_length + 1]
        return x, y
