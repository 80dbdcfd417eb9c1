import torch


class Solution:
    def encode(self, text: str, corpus: str) -> torch.Tensor:
        vocabulary = "".join(sorted(set(corpus)))
        missing = [char for char in text if char not in vocabulary]
        if missing:
            raise ValueError(f"not in the corpus: {', '.join(map(repr, missing))}")
        return torch.LongTensor([vocabulary.index(char) for char in text])
