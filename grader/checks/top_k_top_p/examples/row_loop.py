import math

import torch
from torchtyping import TensorType


class Solution:
    def top_k_top_p_filtering(self, logits: TensorType[..., "vocab_size", float], top_k: int = 0, top_p: float = 1.0, filter_value: float = -float("Inf"), min_tokens_to_keep: int = 1) -> TensorType[..., "vocab_size", float]:
        rows = logits.reshape(-1, logits.shape[-1]).tolist()
        out = []
        for row in rows:
            row = list(row)
            if top_k > 0:
                k = min(max(top_k, min_tokens_to_keep), len(row))
                kth = sorted(row, reverse=True)[k - 1]
                row = [v if v >= kth else filter_value for v in row]
            if top_p < 1.0:
                probs = torch.softmax(torch.tensor(row, dtype=logits.dtype), dim=-1).tolist()
                order = sorted(range(len(row)), key=lambda i: probs[i], reverse=True)
                total = 0.0
                for rank, i in enumerate(order):
                    if rank >= min_tokens_to_keep and total >= top_p:
                        row[i] = filter_value
                    total += probs[i]
            out.append(row)
        return torch.tensor(out, dtype=logits.dtype).reshape(logits.shape)
