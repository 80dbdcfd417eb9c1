import torch
from torchtyping import TensorType


class Solution:
    def top_p_filter(self, logits: TensorType[..., "vocab_size", float], top_p: float, min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        if top_p < 0 or top_p > 1.0:
            raise ValueError(f"`top_p` has to be a float between 0 and 1, but is {top_p}")
        sorted_logits, sorted_indices = torch.sort(logits, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)

        # Remove tokens with cumulative top_p above the threshold (token with 0 are kept)
        sorted_indices_to_remove = cumulative_probs <= (1 - top_p)
        # Keep at least min_tokens_to_keep
        sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0

        # scatter sorted tensors to original indexing
        indices_to_remove = sorted_indices_to_remove.scatter(-1, sorted_indices, sorted_indices_to_remove)
        return logits.masked_fill(indices_to_remove, -float("Inf"))
