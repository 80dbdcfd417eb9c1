import torch
from torchtyping import TensorType


class Solution:
    def top_p_filter(self, logits: TensorType[..., "vocab_size", float], top_p: float, min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        if top_p < 0 or top_p > 1.0:
            raise ValueError(f"`top_p` has to be a float between 0 and 1, but is {top_p}")
        sorted_logits, sorted_indices = torch.sort(logits, dim=-1, descending=True)
        probs = torch.softmax(sorted_logits, dim=-1)
        before = torch.cumsum(probs, dim=-1) - probs  # what the likelier tokens hold
        remove = before >= top_p
        remove[..., :min_tokens_to_keep] = False
        out = logits.clone()
        keep_sorted = torch.where(remove, torch.full_like(sorted_logits, float("-inf")), sorted_logits)
        return out.scatter(-1, sorted_indices, keep_sorted)
