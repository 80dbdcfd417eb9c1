def get_stats(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    newids = []
    i = 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            newids.append(idx)
            i += 2
        else:
            newids.append(ids[i])
            i += 1
    return newids


class Solution:
    def train_bpe(self, text, vocab_size):
        if vocab_size < 256:
            raise ValueError("vocab_size must be at least 256")
        num_merges = vocab_size - 256
        ids = list(text.encode("utf-8"))
        merges = {}
        for i in range(num_merges):
            stats = get_stats(ids)
            if not stats:
                break
            pair = max(stats, key=stats.get)
            idx = 256 + i
            ids = merge(ids, pair, idx)
            merges[pair] = idx
        return list(merges)

    def encode(self, text, merges):
        ranks = {pair: 256 + i for i, pair in enumerate(merges)}
        tokens = list(text.encode("utf-8"))
        while len(tokens) >= 2:
            stats = get_stats(tokens)
            pair = min(stats, key=lambda p: ranks.get(p, float("inf")))
            if pair not in ranks:
                break
            tokens = merge(tokens, pair, ranks[pair])
        return tokens

    def decode(self, ids, merges):
        vocab = {idx: bytes([idx]) for idx in range(256)}
        for i, (p0, p1) in enumerate(merges):
            vocab[256 + i] = vocab[p0] + vocab[p1]
        text_bytes = b"".join(vocab[idx] for idx in ids)
        return text_bytes.decode("utf-8", errors="replace")
