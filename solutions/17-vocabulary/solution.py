import torch
from torchtyping import TensorType


class Solution:
    def encode(self, text: str, corpus: str) -> TensorType["T", int]:
        # Sorting makes the numbering depend only on which characters occur, never
        # on where they first occur or on the order a set happens to iterate in.
        chars = sorted(set(corpus))
        char_to_int = {c: i for i, c in enumerate(chars)}
        unknown = sorted(set(text) - set(char_to_int))
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {''.join(unknown)!r}")
        # dtype=torch.long even for an empty text, where torch.tensor([]) would be float.
        return torch.tensor([char_to_int[c] for c in text], dtype=torch.long)
