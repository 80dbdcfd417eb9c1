import torch
from torchtyping import TensorType


class Solution:
    def top_k_filter(self, logits: TensorType[..., "vocab_size", float], k: int) -> TensorType[..., "vocab_size", float]:
        if k < 1:
            raise ValueError("k must be >= 1")
        kth = torch.topk(logits, min(k, logits.shape[-1]), dim=-1).values[..., -1:]
        return logits.masked_fill(logits < kth, float("-inf"))
