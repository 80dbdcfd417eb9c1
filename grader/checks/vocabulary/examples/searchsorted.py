import torch


class Solution:
    def encode(self, text: str, corpus: str) -> torch.Tensor:
        # Code points sort like the characters themselves.
        vocabulary = torch.unique(torch.tensor([ord(c) for c in corpus]))
        codes = torch.tensor([ord(c) for c in text], dtype=torch.long)
        ids = torch.searchsorted(vocabulary, codes)
        found = ids < len(vocabulary)
        found[found.clone()] = vocabulary[ids[found]] == codes[found]
        if not bool(found.all()):
            bad = sorted({text[i] for i in (~found).nonzero().flatten().tolist()})
            raise ValueError("no id for " + ", ".join(map(repr, bad)))
        return ids
