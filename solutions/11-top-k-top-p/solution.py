import torch
from torchtyping import TensorType


class Solution:
    def top_k_top_p_filtering(
        self,
        logits: TensorType[..., "vocab_size", float],
        top_k: int = 0,
        top_p: float = 1.0,
        filter_value: float = float("-inf"),
        min_tokens_to_keep: int = 1,
    ) -> TensorType[..., "vocab_size", float]:
        if top_k <= 0 and top_p >= 1.0:
            return logits.clone()  # nothing to filter, but still a new tensor
        if top_k > 0:
            top_k = min(max(top_k, min_tokens_to_keep), logits.shape[-1])
            kth_largest = torch.topk(logits, top_k, dim=-1).values[..., -1:]
            logits = logits.masked_fill(logits < kth_largest, filter_value)
        if top_p < 1.0:
            # The nucleus is taken from what top-k left: its probabilities are
            # renormalised over the surviving tokens.
            sorted_logits, sorted_indices = torch.sort(logits, dim=-1, descending=False)
            cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
            sorted_to_remove = cumulative_probs <= 1 - top_p
            sorted_to_remove[..., -min_tokens_to_keep:] = False
            to_remove = sorted_to_remove.scatter(-1, sorted_indices, sorted_to_remove)
            logits = logits.masked_fill(to_remove, filter_value)
        return logits
