import torch
from torchtyping import TensorType


class Solution:
    def top_p_filter(self, logits: TensorType[..., "vocab_size", float], top_p: float, min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        if top_p < 0 or top_p > 1.0:
            raise ValueError(f"`top_p` has to be a float between 0 and 1, but is {top_p}")
        rows = logits.reshape(-1, logits.shape[-1])
        out = rows.clone()
        for r, row in enumerate(rows):
            probs = torch.softmax(row, dim=-1).tolist()
            order = sorted(range(len(probs)), key=lambda i: -probs[i])
            total = 0.0
            for rank, i in enumerate(order):
                if total >= top_p and rank >= min_tokens_to_keep:
                    out[r, i] = float("-inf")
                total += probs[i]
        return out.reshape(logits.shape)
