import torch
from torchtyping import TensorType


class Solution:
    def top_k_filter(self, logits: TensorType[..., "vocab_size", float], k: int) -> TensorType[..., "vocab_size", float]:
        if k < 1:
            raise ValueError(f"`k` has to be a strictly positive integer, but is {k}")
        top_k = min(k, logits.size(-1))  # Safety check
        # Remove all tokens with a probability less than the last token of the top-k
        indices_to_remove = logits < torch.topk(logits, top_k)[0][..., -1, None]
        logits = logits.clone()
        logits[indices_to_remove] = -float("Inf")
        return logits
