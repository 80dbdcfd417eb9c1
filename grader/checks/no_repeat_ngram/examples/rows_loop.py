import torch


class Solution:
    def no_repeat_ngram(self, logits, token_ids, n):
        rows = token_ids.tolist() if logits.dim() == 2 else [list(token_ids)]
        out = logits.clone().view(len(rows), -1)
        for b, ids in enumerate(rows):
            start = len(ids) - (n - 1)
            for i in range(max(start, 0)):
                if ids[i:i + n - 1] == ids[start:]:
                    out[b, ids[i + n - 1]] = float("-inf")
        return out.view(logits.shape)
