import torch
from torchtyping import TensorType


class Solution:
    def apply_temperature(self, logits: TensorType[..., "vocab_size", float], temperature: float) -> TensorType[..., "vocab_size", float]:

        return logits / temperature
