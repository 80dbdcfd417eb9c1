import torch
from torchtyping import TensorType


class Solution:
    def top_p_filter(
        self,
        logits: TensorType[..., "vocab_size", float],
        top_p: float,
        min_tokens_to_keep: int = 1,
    ) -> TensorType[..., "vocab_size", float]:
        if not 0 <= top_p <= 1:
            raise ValueError(f"top_p must be between 0 and 1, got {top_p}")
        # Least likely first: the cumulative sum then reaches each token after
        # every token less likely than it.
        sorted_logits, sorted_indices = torch.sort(logits, dim=-1, descending=False)
        cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
        # A token goes when it and everything less likely hold at most 1 - top_p:
        # what is left (the most likely tokens) holds at least top_p.
        sorted_to_remove = cumulative_probs <= 1 - top_p
        sorted_to_remove[..., -min_tokens_to_keep:] = False
        # Put the decisions back in vocabulary order.
        to_remove = sorted_to_remove.scatter(-1, sorted_indices, sorted_to_remove)
        return logits.masked_fill(to_remove, float("-inf"))
