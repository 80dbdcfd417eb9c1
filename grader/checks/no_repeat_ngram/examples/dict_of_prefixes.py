import torch


class Solution:
    def no_repeat_ngram(self, logits, token_ids, n):
        # The common batched style: a dict from each (n-1)-token prefix to the tokens seen after it.
        single = logits.dim() == 1
        scores = logits.unsqueeze(0) if single else logits
        input_ids = torch.tensor([token_ids], dtype=torch.long) if single else token_ids
        scores = scores.clone()
        cur_len = input_ids.shape[1]
        if cur_len + 1 < n:
            return scores[0] if single else scores
        for b in range(input_ids.shape[0]):
            tokens = input_ids[b].tolist()
            followers = {}
            for ngram in zip(*[tokens[i:] for i in range(n)]):
                followers.setdefault(tuple(ngram[:-1]), []).append(ngram[-1])
            banned = followers.get(tuple(tokens[cur_len + 1 - n:]), [])
            scores[b, banned] = -float("inf")
        return scores[0] if single else scores
