"""Problem 31's reference against well-kept BPE code: tiktoken and Hugging Face tokenizers.

The grader judges learners against the reference, so the reference is checked
here against others' tokenizers where their rules agree with the statement's:

- tiktoken's educational trainer counts pairs and breaks ties as the statement
  does (a Counter, max by count: the pair seen first), but keys its tokens by
  their bytes, so it is compared on texts whose merges make tokens of distinct
  bytes, and where pairs last (it cannot stop early). tiktoken's encoders (the
  educational one and the Rust core) merge the lowest-ranked pair first.
- Hugging Face's BpeTrainer breaks ties by its own ids, so it is compared on
  texts where no round of training has a tie; the whole text is one word
  (ByteLevel without its regex), its 256 byte characters the initial alphabet.

Each library is an optional test dependency: missing, its tests are skipped.
"""

from __future__ import annotations

import json
import random

import pytest

from tests.conftest import reference_module

BYTES = 256
WHOLE_TEXT = r"[\s\S]+"  # one piece: the reference counts pairs across the whole text
LETTERS = list("aab ") + ["é", "日", "🙂", "\n"]


def reference():
    return reference_module("31-bpe")


def corpus() -> str:
    from grader.model import artifacts

    return artifacts.CORPUS.read_text(encoding="utf-8")


def texts() -> list[tuple[str, int]]:
    """(text, vocab_size): corpus pieces and slices, non-ASCII text, and random texts
    of few letters, where pairs tie and overlap."""
    found = [(corpus()[:3000], BYTES + 50), (corpus()[10000:12000], BYTES + 30),
             ("Zoë's café: déjà vu. Zoë's naïve café! 日本の日本語. 🙂🙂" * 3, BYTES + 20)]
    generator = random.Random(31)
    text = corpus()
    for _ in range(60):  # slices of English text: rounds without a tie are common there
        start = generator.randrange(len(text) - 1000)
        found.append((text[start:start + generator.randint(100, 1000)],
                      BYTES + generator.randint(1, 15)))
    for _ in range(300):
        text = "".join(generator.choice(LETTERS) for _ in range(generator.randint(2, 40)))
        found.append((text, BYTES + generator.randint(1, 12)))
    return found


def had_no_ties(text: str, merges: list[tuple[int, int]]) -> bool:
    """Whether each of these merges was, when learned, the one most frequent pair."""
    bpe = reference()
    ids = list(text.encode("utf-8"))
    for rank, pair in enumerate(merges):
        counts: dict[tuple[int, int], int] = {}
        for p in zip(ids, ids[1:]):
            counts[p] = counts.get(p, 0) + 1
        if sorted(counts.values())[-2:-1] == [counts[pair]]:
            return False
        ids = bpe.merge(ids, pair, BYTES + rank)
    return True


def distinct_tokens(merges: list[tuple[int, int]]) -> bool:
    tokens = reference().vocabulary(merges)
    return len(set(tokens)) == len(tokens)


def test_training_agrees_with_tiktokens_educational_trainer() -> None:
    educational = pytest.importorskip("tiktoken._educational",
                                      reason="tiktoken is not installed")
    solution = reference().Solution()
    compared = 0
    for text, vocab_size in texts():
        merges = solution.train_bpe(text, vocab_size)
        if len(merges) < vocab_size - BYTES or not distinct_tokens(merges):
            continue  # tiktoken's trainer fails when pairs run out; it keys tokens by bytes
        ranks = educational.bpe_train(text, vocab_size, WHOLE_TEXT, visualise=None)
        theirs = sorted(ranks, key=ranks.__getitem__)[BYTES:]
        assert reference().vocabulary(merges)[BYTES:] == theirs, (text, vocab_size)
        compared += 1
    assert compared >= 100, f"only {compared} texts compared"


@pytest.mark.parametrize("core", [False, True], ids=["educational", "core"])
def test_encoding_agrees_with_tiktoken(core: bool) -> None:
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed")
    from tiktoken import _educational

    module = reference()
    solution = module.Solution()
    compared = 0
    for trained_on, vocab_size in texts()[:60]:
        merges = solution.train_bpe(trained_on, vocab_size)
        if not distinct_tokens(merges):
            continue
        ranks = {token: i for i, token in enumerate(module.vocabulary(merges))}
        encoding = tiktoken.Encoding("kata-bpe", pat_str=WHOLE_TEXT, mergeable_ranks=ranks,
                                     special_tokens={})
        for text in (trained_on, corpus()[20000:21000], "Once upon a time, 日本 🙂 é"):
            ids = solution.encode(text, merges)
            theirs = (encoding.encode(text, disallowed_special=()) if core else
                      _educational.bpe_encode(ranks, text.encode("utf-8"), visualise=None))
            assert ids == theirs, (trained_on, text)
            assert solution.decode(ids, merges) == text == encoding.decode(theirs)
            compared += 1
    assert compared >= 100, f"only {compared} encodings compared"


def gpt2_bytes() -> dict[str, int]:
    """The byte each of ByteLevel's 256 characters stands for (GPT-2's byte-to-unicode table)."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    chars, extra = {}, 0
    for b in range(BYTES):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(BYTES + extra)] = b
            extra += 1
    return chars


def test_training_agrees_with_hugging_face_tokenizers_where_no_round_ties() -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    from tokenizers import models, pre_tokenizers, trainers

    to_byte = gpt2_bytes()
    assert sorted(to_byte) == sorted(pre_tokenizers.ByteLevel.alphabet())

    def as_bytes(token: str) -> bytes:
        return bytes(to_byte[c] for c in token)

    solution = reference().Solution()
    compared = 0
    for text, vocab_size in texts():
        merges = solution.train_bpe(text, vocab_size)
        if not (had_no_ties(text, merges) and distinct_tokens(merges)):
            continue
        tokenizer = tokenizers.Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False,
                                                           use_regex=False)
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        tokenizer.train_from_iterator([text], trainer)
        # Merges are pairs of strings ("a b" in a line before tokenizers 0.20).
        theirs = [m.split(" ") if isinstance(m, str) else m
                  for m in json.loads(tokenizer.to_str())["model"]["merges"]]
        tokens = reference().vocabulary(merges)
        mine = [(tokens[a], tokens[b]) for a, b in merges]
        assert [(as_bytes(a), as_bytes(b)) for a, b in theirs] == mine, (text, vocab_size)
        compared += 1
    assert compared >= 20, f"only {compared} texts compared"
