import torch
from torchtyping import TensorType


class Solution:
    def top_k_filter(
        self, logits: TensorType[..., "vocab_size", float], k: int
    ) -> TensorType[..., "vocab_size", float]:
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        k = min(k, logits.shape[-1])  # asking for more tokens than exist keeps them all
        # The k-th largest logit of each row, kept as a column so it broadcasts.
        kth_largest = torch.topk(logits, k, dim=-1).values[..., -1:]
        # Compare values, not positions: every logit tied with the k-th one stays.
        return logits.masked_fill(logits < kth_largest, float("-inf"))
