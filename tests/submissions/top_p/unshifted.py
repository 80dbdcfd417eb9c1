import torch
from torchtyping import TensorType


class Solution:
    def top_p_filter(self, logits: TensorType[..., "vocab_size", float], top_p: float, min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        if top_p < 0 or top_p > 1.0:
            raise ValueError(f"`top_p` has to be a float between 0 and 1, but is {top_p}")
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
        sorted_indices_to_remove = cumulative_probs > top_p
        sorted_indices_to_remove[..., :min_tokens_to_keep] = 0
        indices_to_remove = sorted_indices_to_remove.scatter(-1, sorted_indices, sorted_indices_to_remove)
        return logits.masked_fill(indices_to_remove, float("-inf"))
