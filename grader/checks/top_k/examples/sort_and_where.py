import torch
from torchtyping import TensorType


class Solution:
    def top_k_filter(self, logits: TensorType[..., "vocab_size", float], k: int) -> TensorType[..., "vocab_size", float]:
        if k < 1:
            raise ValueError("k must be >= 1")
        sorted_logits = torch.sort(logits, dim=-1, descending=True).values
        threshold = sorted_logits[..., min(k, logits.shape[-1]) - 1].unsqueeze(-1)
        return torch.where(logits >= threshold, logits, torch.full_like(logits, float("-inf")))
