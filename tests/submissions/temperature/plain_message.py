import torch
from torchtyping import TensorType


class Solution:
    def apply_temperature(self, logits: TensorType[..., "vocab_size", float], temperature: float) -> TensorType[..., "vocab_size", float]:
        if temperature <= 0:
            raise ValueError(f"`temperature` (={temperature}) has to be a strictly positive float")
        return logits / temperature
