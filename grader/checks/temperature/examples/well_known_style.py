import torch
from torchtyping import TensorType


class Solution:
    def apply_temperature(self, logits: TensorType[..., "vocab_size", float], temperature: float) -> TensorType[..., "vocab_size", float]:
        if temperature <= 0:
            raise ValueError("temperature must be positive; use greedy decoding for temperature 0")
        return logits / temperature
