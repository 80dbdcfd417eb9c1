import torch
from torchtyping import TensorType


class Solution:
    def top_k_filter(self, logits: TensorType[..., "vocab_size", float], k: int) -> TensorType[..., "vocab_size", float]:
        if k < 1:
            raise ValueError("need k >= 1")
        rows = logits.reshape(-1, logits.shape[-1])
        out = []
        for row in rows:
            keep = min(k, row.numel())
            # the keep-th largest is the (n - keep + 1)-th smallest
            threshold = torch.kthvalue(row, row.numel() - keep + 1).values
            out.append(torch.tensor([v if v >= threshold else float("-inf") for v in row.tolist()], dtype=row.dtype))
        return torch.stack(out).reshape(logits.shape)
