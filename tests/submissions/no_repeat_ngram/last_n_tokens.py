import torch


class Solution:
    def no_repeat_ngram(self, logits, token_ids, n):
        rows = token_ids.tolist() if logits.dim() == 2 else [list(token_ids)]
        out = logits.clone().view(len(rows), -1)
        for b, ids in enumerate(rows):
            last = ids[len(ids) - n:] if len(ids) >= n else None
            if last is None:
                continue
            for i in range(len(ids) - n):
                if ids[i:i + n] == last:
                    out[b, ids[i + n]] = float("-inf")
        return out.view(logits.shape)
