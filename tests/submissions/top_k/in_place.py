import torch
from torchtyping import TensorType


class Solution:
    def top_k_filter(self, logits: TensorType[..., "vocab_size", float], k: int) -> TensorType[..., "vocab_size", float]:
        if k < 1:
            raise ValueError("k must be >= 1")
        indices_to_remove = logits < torch.topk(logits, min(k, logits.size(-1)))[0][..., -1, None]
        logits[indices_to_remove] = -float("Inf")
        return logits
