import torch
from torchtyping import TensorType


class Solution:
    def top_k_top_p_filtering(self, logits: TensorType[..., "vocab_size", float], top_k: int = 0, top_p: float = 1.0, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        remove = torch.zeros_like(logits, dtype=torch.bool)
        if top_k > 0:
            k = min(max(top_k, min_tokens_to_keep), logits.size(-1))
            remove |= logits < torch.topk(logits, k)[0][..., -1, None]
        if top_p < 1.0:
            sorted_logits, sorted_indices = torch.sort(logits, descending=False)
            cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
            sorted_remove = cumulative_probs <= (1 - top_p)
            sorted_remove[..., -min_tokens_to_keep:] = False
            remove |= sorted_remove.scatter(-1, sorted_indices, sorted_remove)
        return logits.masked_fill(remove, filter_value)
