import numpy as np
import torch


class Solution:
    def encode(self, text, corpus):
        chars = sorted(set(corpus))
        stoi = {ch: i for i, ch in enumerate(chars)}
        missing = [ch for ch in text if ch not in stoi]
        if missing:
            raise ValueError(f"unknown characters: {missing}")
        ids = np.array([stoi[ch] for ch in text], dtype=np.int64)
        return torch.from_numpy(ids)
