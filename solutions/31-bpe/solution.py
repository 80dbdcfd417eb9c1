BYTES = 256  # ids 0 to 255 are the bytes themselves; merged tokens come after them


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """ids with every occurrence of pair replaced by new_id, from left to right."""
    merged: list[int] = []
    i = 0
    while i < len(ids):
        # Left to right and never overlapping: in "aaa" the first two a's merge,
        # and the third stays alone.
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
            i += 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def vocabulary(merges: list[tuple[int, int]]) -> list[bytes]:
    """The bytes each id stands for: a merged token is its pair's bytes, joined."""
    tokens = [bytes([b]) for b in range(BYTES)]
    for first, second in merges:
        tokens.append(tokens[first] + tokens[second])
    return tokens


class Solution:
    def train_bpe(self, text: str, vocab_size: int) -> list[tuple[int, int]]:
        if vocab_size < BYTES:
            raise ValueError(f"vocab_size {vocab_size} is below {BYTES}: every byte needs an id")
        ids = list(text.encode("utf-8"))
        merges: list[tuple[int, int]] = []
        while BYTES + len(merges) < vocab_size and len(ids) >= 2:
            counts: dict[tuple[int, int], int] = {}
            for pair in zip(ids, ids[1:]):
                counts[pair] = counts.get(pair, 0) + 1
            # A dict keeps its keys in the order they were first seen, and max()
            # keeps the first of equal maxima: a tie goes to the pair seen first.
            best = max(counts, key=counts.__getitem__)
            ids = merge(ids, best, BYTES + len(merges))
            merges.append(best)
        return merges

    def encode(self, text: str, merges: list[tuple[int, int]]) -> list[int]:
        ids = list(text.encode("utf-8"))
        # In the order they were learned: a later merge may join tokens an
        # earlier one made, never the other way round.
        for rank, pair in enumerate(merges):
            ids = merge(ids, pair, BYTES + rank)
        return ids

    def decode(self, ids: list[int], merges: list[tuple[int, int]]) -> str:
        tokens = vocabulary(merges)
        # Bytes first, text after: one character's bytes may be split over tokens.
        return b"".join(tokens[i] for i in ids).decode("utf-8", errors="replace")
