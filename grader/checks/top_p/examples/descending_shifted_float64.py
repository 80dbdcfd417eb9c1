import torch
from torchtyping import TensorType


class Solution:
    def top_p_filter(self, logits: TensorType[..., "vocab_size", float], top_p: float, min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        if top_p < 0 or top_p > 1.0:
            raise ValueError(f"`top_p` has to be a float between 0 and 1, but is {top_p}")
        sorted_logits, sorted_indices = torch.sort(logits, dim=-1, descending=True)
        cumulative = torch.softmax(sorted_logits.double(), dim=-1).cumsum(dim=-1)
        remove = cumulative >= top_p
        # shift right: a token stays if the tokens before it hold less than top_p
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        remove[..., :min_tokens_to_keep] = False
        mask = torch.zeros_like(remove).scatter(-1, sorted_indices, remove)
        return torch.where(mask, torch.tensor(float("-inf"), dtype=logits.dtype), logits)
