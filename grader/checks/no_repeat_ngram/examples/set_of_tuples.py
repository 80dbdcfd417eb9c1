import torch


class Solution:
    def _one(self, row, ids, n):
        seen = {tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)}
        tail = tuple(ids[len(ids) - n + 1:]) if n > 1 else ()
        if len(ids) < n - 1:
            return row.clone()
        out = row.clone()
        for t in range(row.shape[0]):
            if tail + (t,) in seen:
                out[t] = float("-inf")
        return out

    def no_repeat_ngram(self, logits, token_ids, n):
        if logits.dim() == 1:
            return self._one(logits, list(token_ids), n)
        return torch.stack([self._one(logits[b], token_ids[b].tolist(), n)
                            for b in range(logits.shape[0])])
