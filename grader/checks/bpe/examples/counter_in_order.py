from collections import Counter


def replace_pair(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    # One pass: a token that completes the pair with the last one kept replaces it.
    # new_id is in no pair of its own merge, so a merged token is never merged again.
    out = []
    for token in ids:
        if out and (out[-1], token) == pair:
            out[-1] = new_id
        else:
            out.append(token)
    return out


class Solution:
    def train_bpe(self, text: str, vocab_size: int) -> list[tuple[int, int]]:
        if vocab_size < 256:
            raise ValueError(f"need at least 256 ids for the bytes, got {vocab_size}")
        ids = list(text.encode("utf-8"))
        merges = []
        while 256 + len(merges) < vocab_size and len(ids) > 1:
            # most_common keeps equal counts in the order they were first counted
            (pair, _), = Counter(zip(ids, ids[1:])).most_common(1)
            ids = replace_pair(ids, pair, 256 + len(merges))
            merges.append(list(pair))  # pairs as lists: [first, second]
        return merges

    def encode(self, text: str, merges: list[tuple[int, int]]) -> list[int]:
        ids = list(text.encode("utf-8"))
        for i, pair in enumerate(merges):
            ids = replace_pair(ids, tuple(pair), 256 + i)
        return ids

    def decode(self, ids: list[int], merges: list[tuple[int, int]]) -> str:
        pieces = [bytes([b]) for b in range(256)]
        for first, second in merges:
            pieces.append(pieces[first] + pieces[second])
        return bytes(b for i in ids for b in pieces[i]).decode("utf-8", "replace")
