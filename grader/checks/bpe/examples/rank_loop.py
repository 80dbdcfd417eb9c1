"""tiktoken's educational encoder, on pairs of ids: merge the lowest-ranked pair
present, one place at a time, until no pair has a rank."""

import collections


class Solution:
    def train_bpe(self, text, vocab_size):
        if vocab_size < 256:
            raise ValueError("vocab_size below 256")
        parts = list(text.encode("utf-8"))
        merges = []
        while len(merges) < vocab_size - 256:
            stats = collections.Counter()
            for pair in zip(parts[:-1], parts[1:]):
                stats[pair] += 1
            if not stats:
                break
            best = max(stats, key=lambda x: stats[x])
            token = 256 + len(merges)
            merges.append(best)
            new_parts = []
            i = 0
            while i < len(parts) - 1:
                if (parts[i], parts[i + 1]) == best:
                    new_parts.append(token)
                    i += 2
                else:
                    new_parts.append(parts[i])
                    i += 1
            if i == len(parts) - 1:
                new_parts.append(parts[i])
            parts = new_parts
        return merges

    def encode(self, text, merges):
        ranks = {tuple(pair): rank for rank, pair in enumerate(merges)}
        parts = list(text.encode("utf-8"))
        while True:
            min_idx, min_rank = None, None
            for i, pair in enumerate(zip(parts[:-1], parts[1:])):
                rank = ranks.get(pair)
                if rank is not None and (min_rank is None or rank < min_rank):
                    min_idx, min_rank = i, rank
            if min_rank is None:
                return parts
            parts = parts[:min_idx] + [256 + min_rank] + parts[min_idx + 2:]

    def decode(self, ids, merges):
        def expand(i):
            if i < 256:
                return [i]
            first, second = merges[i - 256]
            return expand(first) + expand(second)

        return bytes(b for i in ids for b in expand(i)).decode("utf-8", errors="replace")
