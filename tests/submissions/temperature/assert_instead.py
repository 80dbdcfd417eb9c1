import torch
from torchtyping import TensorType


class Solution:
    def apply_temperature(self, logits: TensorType[..., "vocab_size", float], temperature: float) -> TensorType[..., "vocab_size", float]:
        assert temperature > 0, "use greedy decoding instead"
        return logits / temperature
