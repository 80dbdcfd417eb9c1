import torch


class Solution:
    def no_repeat_ngram(self, logits, token_ids, n):
        ids = token_ids[0].tolist() if logits.dim() == 2 else list(token_ids)
        start = len(ids) - (n - 1)
        banned = [ids[i + n - 1] for i in range(max(start, 0)) if ids[i:i + n - 1] == ids[start:]]
        out = logits.clone()
        out[..., banned] = float("-inf")
        return out
