import torch
from torchtyping import TensorType


class Solution:
    def apply_temperature(self, logits: TensorType[..., "vocab_size", float], temperature: float) -> TensorType[..., "vocab_size", float]:
        if not temperature > 0:
            raise ValueError(f"got temperature={temperature}: only positive values work; for 0, switch to Greedy search")
        scaled = logits.clone()
        scaled /= temperature
        return scaled
