"""The bpe check's own byte-pair tokenizer, with knobs for the known mistakes.

It makes the mistakes' answers (grader/checks/bpe/check_bpe.py) and the merges the
encode and decode cases use. The learner is judged against the reference, never
against it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

BYTES = 256

Pair = tuple[int, int]


def first_ids(text: str, code_points: bool = False) -> list[int]:
    return [ord(c) for c in text] if code_points else list(text.encode("utf-8"))


def merge(ids: list[int], pair: Pair, new_id: int, first_only: bool = False,
          keep_second: bool = False) -> list[int]:
    """`ids` with `pair` merged into `new_id`, or a mistake's: only its `first_only`
    occurrence, or stepping on by one past a match (`keep_second`), which keeps the
    pair's second id after the new one."""
    out: list[int] = []
    i = 0
    done = False
    while i < len(ids):
        if not done and i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 1 if keep_second else 2
            done = first_only
        else:
            out.append(ids[i])
            i += 1
    return out


def count_pairs(ids: list[int], overlapping: bool = True) -> dict[Pair, int]:
    """Each pair's count, in order of first appearance. Without `overlapping`, as
    str.count counts: in "aaa" the pair a, a once, since its two places overlap."""
    counts: dict[Pair, int] = {}
    counted_at: dict[Pair, int] = {}
    for i, pair in enumerate(zip(ids, ids[1:])):
        if not overlapping and counted_at.get(pair) == i - 1:
            continue
        counts[pair] = counts.get(pair, 0) + 1
        counted_at[pair] = i
    return counts


# How each tie rule picks among the most frequent pairs, in order of first appearance.
TIE_RULES = {"first": lambda tied: tied[0], "last": lambda tied: tied[-1],
             "smallest": min, "largest": max}


def most_frequent(counts: dict[Pair, int], ties: str = "first") -> Pair:
    top = max(counts.values())
    return TIE_RULES[ties]([p for p, n in counts.items() if n == top])


def train(text: str, vocab_size: int, *, ties: str = "first", overlapping: bool = True,
          counts_kept: str = "", extra: int = 0, code_points: bool = False,
          keep_second: bool = False) -> list[Pair]:
    """The merges of `text`, or those of a mistake: `ties` another tie rule, counts
    without overlaps, `counts_kept` "stale" (counted once, never again) or "popped"
    (counted once, each merged pair taken out), `extra` merges too many, code points,
    a merge that keeps each pair's second id (`keep_second`)."""
    if vocab_size < BYTES:
        raise ValueError(f"vocab_size {vocab_size} < {BYTES}")
    ids = first_ids(text, code_points)
    if overlapping and not counts_kept and ties == "first" and not keep_second:
        return _train_as_text(ids, vocab_size - BYTES + extra)
    merges: list[Pair] = []
    counts = count_pairs(ids, overlapping)
    while len(merges) < vocab_size - BYTES + extra and len(ids) >= 2:
        if not counts_kept:
            counts = count_pairs(ids, overlapping)
        if not counts:
            break
        best = most_frequent(counts, ties)
        if counts_kept == "popped":
            del counts[best]
        ids = merge(ids, best, BYTES + len(merges), keep_second=keep_second)
        merges.append(best)
    return merges


# The usual rules, run on the ids as the characters of a str: str.replace merges a pair
# left to right without overlaps, as `merge` does, and a Counter of the zipped pairs
# counts them in order of first appearance, as `count_pairs` does, both in C. The
# corpus's merges, which every grade of bpe needs, train in a hundredth of the time.
def _train_as_text(ids: list[int], merges_wanted: int) -> list[Pair]:
    text = "".join(map(chr, ids))
    merges: list[Pair] = []
    while len(merges) < merges_wanted and len(text) >= 2:
        counts = Counter(zip(text, text[1:]))
        top = max(counts.values())
        first, second = next(pair for pair, n in counts.items() if n == top)
        text = text.replace(first + second, chr(BYTES + len(merges)))
        merges.append((ord(first), ord(second)))
    return merges


def _merge_all_as_text(ids: list[int], ranked: Sequence[tuple[int, Pair]]) -> list[int]:
    text = "".join(map(chr, ids))
    for new_id, (first, second) in ranked:
        text = text.replace(chr(first) + chr(second), chr(new_id))
    return [ord(c) for c in text]


def encode(text: str, merges: Sequence[Pair], *, order: str = "learned",
           first_only: bool = False, code_points: bool = False,
           first_id: int = BYTES, keep_second: bool = False) -> list[int]:
    """The ids of `text`, or those of a mistake: the merges in `order` "reversed" or
    by "count" in the text, only each pair's first occurrence, code points, the
    merged tokens numbered from `first_id`, or each pair's second id kept."""
    ids = first_ids(text, code_points)
    ranked = [(first_id + rank, tuple(pair)) for rank, pair in enumerate(merges)]
    if order == "count":
        known = {pair: new_id for new_id, pair in ranked}
        while True:
            present = {p: n for p, n in count_pairs(ids).items() if p in known}
            if not present:
                return ids
            best = most_frequent(present)
            ids = merge(ids, best, known[best])
    ranked = list(reversed(ranked)) if order == "reversed" else ranked
    if not (first_only or keep_second):
        return _merge_all_as_text(ids, ranked)
    for new_id, pair in ranked:
        ids = merge(ids, pair, new_id, first_only, keep_second)
    return ids


def token_bytes(merges: Sequence[Pair]) -> list[bytes]:
    tokens = [bytes([b]) for b in range(BYTES)]
    for first, second in merges:
        tokens.append(tokens[first] + tokens[second])
    return tokens


def decode(ids: Sequence[int], merges: Sequence[Pair], *, per_token: bool = False,
           latin1: bool = False) -> str | None:
    tokens = token_bytes(merges)
    if per_token:
        return "".join(tokens[i].decode("utf-8", errors="replace") for i in ids)
    joined = b"".join(tokens[i] for i in ids)
    return joined.decode("latin-1") if latin1 else joined.decode("utf-8", errors="replace")
