import torch


class Solution:
    def encode(self, text, corpus):
        chars = sorted(list(set(corpus)))
        stoi = {ch: i for i, ch in enumerate(chars)}
        missing = [ch for ch in text if ch not in stoi]
        if missing:
            raise ValueError(f"unknown characters: {missing}")
        return torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
