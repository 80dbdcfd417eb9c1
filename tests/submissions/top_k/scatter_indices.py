import torch
from torchtyping import TensorType


class Solution:
    def top_k_filter(self, logits: TensorType[..., "vocab_size", float], k: int) -> TensorType[..., "vocab_size", float]:
        if k < 1:
            raise ValueError("k must be >= 1")
        k = min(k, logits.shape[-1])
        values, indices = torch.topk(logits, k, dim=-1)
        out = torch.full_like(logits, float("-inf"))
        return out.scatter(-1, indices, values)
