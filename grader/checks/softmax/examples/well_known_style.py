import torch
from torchtyping import TensorType


class Solution:
    def softmax(self, logits: TensorType[..., "vocab_size", float]) -> TensorType[..., "vocab_size", float]:
        exps = torch.exp(logits - logits.max(dim=-1, keepdim=True).values)
        return exps / exps.sum(dim=-1, keepdim=True)
