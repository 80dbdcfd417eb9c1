import torch


class Solution:
    def encode(self, text: str, corpus: str) -> torch.Tensor:
        vocabulary = "".join(sorted(set(corpus)))
        for char in text:
            if char not in vocabulary:
                raise ValueError(f"{char!r} is not in the corpus")
        return torch.LongTensor([vocabulary.index(char) for char in text])
