import torch


class Solution:
    def no_repeat_ngram(self, logits, token_ids, n):
        rows = logits.view(-1, logits.shape[-1])
        if logits.dim() == 1:
            ids = torch.tensor(token_ids, dtype=torch.long).view(1, len(token_ids))
        else:
            ids = token_ids
        mask = torch.zeros_like(rows, dtype=torch.bool)
        T = ids.shape[1]
        if T >= n:
            grams = ids.unfold(1, n, 1)                    # (B, T - n + 1, n)
            tail = ids[:, T - (n - 1):]                     # (B, n - 1)
            match = (grams[:, :, :-1] == tail[:, None, :]).all(dim=-1)
            nxt = grams[:, :, -1]
            for b in range(ids.shape[0]):
                mask[b, nxt[b][match[b]]] = True
        return torch.where(mask, torch.tensor(float("-inf"), dtype=logits.dtype), rows).view(
            logits.shape)
