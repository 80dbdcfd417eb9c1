import torch
from torchtyping import TensorType


def top_k_filter(logits, k, filter_value):
    kth = torch.sort(logits, dim=-1, descending=True).values[..., k - 1 : k]
    return torch.where(logits < kth, torch.full_like(logits, filter_value), logits)


def top_p_filter(logits, top_p, filter_value, keep):
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(sorted_logits.double(), dim=-1)
    before = probs.cumsum(dim=-1) - probs  # probability held by the likelier tokens
    remove_sorted = before >= top_p
    remove_sorted[..., :keep] = False
    remove = torch.empty_like(remove_sorted).scatter_(-1, order, remove_sorted)
    return torch.where(remove, torch.full_like(logits, filter_value), logits)


class Solution:
    def top_k_top_p_filtering(self, logits: TensorType[..., "vocab_size", float], top_k: int = 0, top_p: float = 1.0, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        out = logits.clone()
        if top_k > 0:
            out = top_k_filter(out, min(max(top_k, min_tokens_to_keep), out.shape[-1]), filter_value)
        if top_p < 1.0:
            out = top_p_filter(out, top_p, filter_value, min_tokens_to_keep)
        return out
