import torch
import torch.nn.functional as F
from torchtyping import TensorType


class Solution:
    def loss(
        self, logits: TensorType["B", "T", "vocab_size", float], targets: TensorType["B", "T", int]
    ) -> torch.Tensor:
        # Every position is one prediction: B * T rows of scores, one target each.
        B, T, V = logits.shape
        return F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))
