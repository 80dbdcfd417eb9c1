"""Checks for problem 31, bpe: learn byte-pair merges, then encode and decode with them.

Three methods, one contract each. train_bpe's fixed cases have goldens; encode
and decode take merges as an argument, so their cases are judged against the
live reference (goldens=False), and so are every method's drawn examples.

The check's own tokenizer, with knobs for the known mistakes, is in
grader/checks/bpe/bpe_tokenizer.py: it makes the mistakes' answers and the merges
the encode and decode cases use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial
from typing import Any

from hypothesis import strategies as st

from grader.checks.bpe.bpe_tokenizer import (
    BYTES,
    Pair,
    decode,
    encode,
    token_bytes,
    train,
)
from grader.grading.contracts.contract import Contract, Refusal
from grader.grading.judging.any_result import expect_text
from grader.grading.subject.cases import corpus_prefix
from grader.grading.subject.kata import Call, Judge
from grader.grading.values.failures import Diagnosis, GradeFailure, Mistake
from grader.locale import marked, tr

# -- mistakes --------------------------------------------------------------------------------
# The merge that steps on by one past a match: training and encoding share it.
KEEP_SECOND = ("keep the pair's second id after merging it (the loop steps on by one, not two)",
               "after writing the new id, step past both ids of the pair: i += 2")

TRAIN_MISTAKES = [
    Mistake("break a tie between equally frequent pairs another way than by which is seen "
            "first",
            "of the most frequent pairs, take the one whose first occurrence comes first in "
            "the current ids: count into a dict (or a Counter) in the order of the text, "
            "and max(counts, key=counts.get) keeps the first of equal counts",
            partial(train, ties="smallest"), partial(train, ties="largest"),
            partial(train, ties="last")),
    Mistake("count a pair's occurrences without the overlapping ones (as str.count and "
            "bytes.count do: 'aaa'.count('aa') is 1)",
            "count every adjacent pair of ids, zip(ids, ids[1:]): in 'aaa' the pair a, a "
            "occurs twice. Only the merge itself skips the overlap",
            partial(train, overlapping=False)),
    Mistake("count the pairs once, on the text's bytes, and never again",
            "after each merge, count the pairs of the new ids afresh: a merge makes new "
            "pairs (with the new token) and ends others",
            partial(train, counts_kept="stale"), partial(train, counts_kept="popped")),
    Mistake("learn one merge too many or too few",
            "vocab_size counts the 256 byte ids too: learn vocab_size - 256 merges (fewer "
            "only when fewer than two ids are left)",
            partial(train, extra=1), partial(train, extra=-1)),
    Mistake("work on the characters' code points (ord) instead of their UTF-8 bytes",
            "start from list(text.encode('utf-8')): every id below 256 is a byte, and a "
            "character outside ASCII is two to four of them",
            partial(train, code_points=True)),
    Mistake(*KEEP_SECOND, partial(train, keep_second=True)),
]

ENCODE_MISTAKES = [
    Mistake("apply the merges in another order than they were learned",
            "apply merges[0] first, then merges[1], ...: a later merge may join tokens an "
            "earlier one made, so it must come after it",
            partial(encode, order="reversed")),
    Mistake("merge the pair that occurs most often in the text, instead of the one "
            "learned first",
            "at encode time the rank decides, not the count: merge the pair of lowest rank "
            "(learned first) that is present, or apply the merges in order",
            partial(encode, order="count")),
    Mistake("merge only the first occurrence of each pair",
            "replace every occurrence, left to right, as training did",
            partial(encode, first_only=True)),
    Mistake("work on the characters' code points (ord) instead of their UTF-8 bytes",
            "start from list(text.encode('utf-8')); a character outside ASCII is two to "
            "four bytes",
            partial(encode, code_points=True)),
    Mistake("number the merged tokens from 257 (or 255)",
            "merges[i] makes id 256 + i: the first merge is id 256, right after the bytes",
            partial(encode, first_id=BYTES + 1), partial(encode, first_id=BYTES - 1)),
    Mistake(*KEEP_SECOND, partial(encode, keep_second=True)),
]

DECODE_MISTAKES = [
    Mistake("decode each token's bytes on its own, then join the strings",
            "join the bytes of all the tokens first, then decode once: one character's "
            "UTF-8 bytes may be split over two tokens",
            partial(decode, per_token=True)),
    Mistake("turn each byte into a character with chr() (that is Latin-1, not UTF-8)",
            "b''.join(...).decode('utf-8', errors='replace')",
            partial(decode, latin1=True)),
]


# -- cases ----------------------------------------------------------------------------------
# The corpus is ASCII; these texts are not, so bytes and characters differ.
NON_ASCII = "Zoë's café: déjà vu. Zoë's naïve café! 日本の日本語. 🙂🙂"
# Wikipedia's example of byte-pair encoding; its second merge is a tie.
WIKIPEDIA = "aaabdaaabac"


def train_cases() -> dict[str, tuple]:
    return {
        "corpus-start": (corpus_prefix(5000), BYTES + 64),
        "corpus-a-line": (corpus_prefix(120), BYTES + 20),
        "wikipedia-example": (WIKIPEDIA, BYTES + 3),
        # (a, a) occurs four times, overlapping (twice without overlaps), (b, c) three
        # times: no tie, and counting without overlaps merges (b, c) first.
        "overlapping-pairs": ("aaaaa bcbcbc", BYTES + 2),
        # Every pair once: the first seen, (d, c), is not the smallest, (b, a).
        "all-tied": ("dcba", BYTES + 1),
        "a-run-of-one-letter": ("a" * 9, BYTES + 5),
        # Runs where counting without overlaps changes the winner: (a, a) three times
        # in "aaaa", twice without overlaps, against (a, b) twice, seen first.
        "a-run-of-four-after-a-pair": ("ab ab aaaa", BYTES + 2),
        "runs-of-two-letters": ("aaaa bbb ab", BYTES + 3),
        "ellipses-and-exclamations": ("Hmm... Zzz... Wow!!! ...", BYTES + 6),
        # Code's indentation: runs of 8 and 12 spaces.
        "indented-code": ("def f(x):\n        if x:\n            return x\n        return 0\n",
                          BYTES + 8),
        "non-ascii": (NON_ASCII, BYTES + 12),
        "runs-out-of-pairs": ("abab", BYTES + 10),
        "no-merges": ("hello", BYTES),
        "empty-text": ("", BYTES + 5),
        "one-character": ("é", BYTES + 5),
    }


@functools.cache
def corpus_merges() -> tuple[Pair, ...]:
    """The merges of the corpus's first 5000 characters: both methods' cases use them,
    and training takes a fifth of a second, so they are trained once (the cases take
    them as a list)."""
    return tuple(train(corpus_prefix(5000), BYTES + 64))


def encode_cases() -> dict[str, tuple]:
    merges = list(corpus_merges())
    later = corpus_prefix(20000)[15000:]
    return {
        "the-training-text": (corpus_prefix(5000), merges),
        "more-of-the-corpus": (later, merges),
        "a-sentence": ("Once upon a time, there was a little girl named Lily.", merges),
        "non-ascii-with-corpus-merges": (NON_ASCII, merges),
        "non-ascii-with-its-own-merges": (NON_ASCII, train(NON_ASCII, BYTES + 12)),
        # (a, a) makes 256, then (256, a) 257: in order, aaaaa is 256, 257.
        "merges-of-merges": ("aaaaa", [(97, 97), (256, 97)]),
        "wikipedia-example": (WIKIPEDIA, train(WIKIPEDIA, BYTES + 3)),
        "no-merges": ("hello", []),
        "empty-text": ("", merges),
    }


def decode_cases() -> dict[str, tuple]:
    merges = list(corpus_merges())
    own = train(NON_ASCII, BYTES + 12)
    e_acute = list("é".encode())
    return {
        "the-training-text": (encode(corpus_prefix(5000), merges), merges),
        "every-token": (list(range(BYTES, BYTES + len(merges))), merges),
        "non-ascii": (encode(NON_ASCII, own), own),
        # é is two bytes, each a token of its own here: decoded alone, each is invalid.
        "a-character-split-over-tokens": (e_acute, []),
        "a-lone-continuation-byte": ([104, 105, e_acute[1], 33], []),
        "empty": ([], merges),
    }


# -- drawing examples -----------------------------------------------------------------------
# Few letters, so that pairs repeat, tie and overlap; and characters of two to four bytes.
LETTERS = list("aab ") + ["é", "日", "🙂", "\n"]


def draw_text(data: st.DataObject, label: str) -> str:
    if data.draw(st.booleans(), label=f"{label} from the corpus"):
        corpus = corpus_prefix(20000)
        start = data.draw(st.integers(0, len(corpus) - 1), label=f"{label} start")
        return corpus[start:start + data.draw(st.integers(0, 300), label=f"{label} length")]
    return data.draw(st.text(st.sampled_from(LETTERS), max_size=40), label=label)


def draw_train(data: st.DataObject) -> tuple:
    text = draw_text(data, "text")
    return text, BYTES + data.draw(st.integers(0, 30), label="vocab_size - 256")


def draw_merges(data: st.DataObject) -> tuple[str, list[Pair]]:
    trained_on, vocab_size = draw_train(data)
    return trained_on, train(trained_on, vocab_size)


def draw_encode(data: st.DataObject) -> tuple:
    trained_on, merges = draw_merges(data)
    if data.draw(st.booleans(), label="encode the training text"):
        return trained_on, merges
    return draw_text(data, "text to encode"), merges


def draw_decode(data: st.DataObject) -> tuple:
    trained_on, merges = draw_merges(data)
    if data.draw(st.booleans(), label="decode the training text's ids"):
        return encode(trained_on, merges), merges
    # Any ids at all: bytes of 128 and above alone are not UTF-8.
    ids = data.draw(st.lists(st.integers(0, BYTES + len(merges) - 1), max_size=30), label="ids")
    return ids, merges


# -- judging --------------------------------------------------------------------------------
def as_merges(value: Any) -> list[Pair] | None:
    """A list of pairs of ints as tuples (a pair may be a list), or None if it is not one."""
    if not isinstance(value, (list, tuple)):
        return None
    pairs = []
    for item in value:
        if not (isinstance(item, (list, tuple)) and len(item) == 2
                and all(is_int(i) for i in item)):
            return None
        pairs.append((int(item[0]), int(item[1])))
    return pairs


def as_ids(value: Any) -> list[int] | None:
    if isinstance(value, (list, tuple)) and all(is_int(i) for i in value):
        return [int(i) for i in value]
    return None


def answer_as(normal: Callable[[Any], list | None], got: Any, method: str, kind: str) -> list:
    """The answer as `normal` makes it, or a failure saying it is not `kind`."""
    answer = normal(got)
    if answer is None:
        raise GradeFailure(tr("{method}() returned {kind_of_value} {value}, not {kind}",
                              method=method, kind_of_value=type(got).__name__,
                              value=show_value(got), kind=kind))
    return answer


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def shown(token: bytes) -> str:
    """A token's bytes as text where they are whole characters, else as bytes."""
    try:
        return repr(token.decode("utf-8"))
    except UnicodeDecodeError:
        return repr(token)


def judge_merges(got: Any, expected: list[Pair], call: Call) -> None:
    if isinstance(got, dict):
        raise GradeFailure(tr("train_bpe() returned a dict; return the merged pairs as a "
                              "list, in the order they were learned (list(merges) of a dict "
                              "that maps each pair to its id, if its ids are 256, 257, ... in "
                              "order)"))
    merges = answer_as(as_merges, got, "train_bpe", tr("a list of pairs of ints"))
    if merges == list(expected):
        return
    text, vocab_size = call.args
    tokens, wanted = token_bytes_or_none(merges), token_bytes(expected)
    for i, (mine, theirs) in enumerate(zip(merges, expected)):
        if mine != theirs:
            what = f" ({shown(tokens[BYTES + i])})" if tokens else ""
            raise GradeFailure(tr(
                "merge {i} (id {id}) is {mine}{bytes}; expected {theirs} ({wanted}), the "
                "first of {count} merges to differ", i=i, id=BYTES + i, mine=mine, bytes=what,
                theirs=tuple(theirs), wanted=shown(wanted[BYTES + i]), count=len(expected)))
    raise GradeFailure(tr("train_bpe() learned {count} merges with vocab_size={vocab_size}; "
                          "expected {expected} (the first {right} are right)",
                          count=len(merges), vocab_size=vocab_size, expected=len(expected),
                          right=min(len(merges), len(expected))))


def token_bytes_or_none(merges: list[Pair]) -> list[bytes] | None:
    """The learner's tokens' bytes, if their merges name only ids made before them."""
    if all(0 <= a < BYTES + i and 0 <= b < BYTES + i for i, (a, b) in enumerate(merges)):
        return token_bytes(merges)
    return None


def judge_ids(got: Any, expected: list[int], call: Call) -> None:
    ids = answer_as(as_ids, got, "encode", tr("a list of ints"))
    if ids == list(expected):
        return
    at = next((i for i, (a, b) in enumerate(zip(ids, expected)) if a != b),
              min(len(ids), len(expected)))
    raise GradeFailure(tr("the ids differ from position {at} on ({count} ids, expected "
                          "{expected_count}):\n  expected ...{expected}\n  got      ...{got}",
                          at=at, count=len(ids), expected_count=len(expected),
                          expected=list(expected[max(0, at - 3):at + 5]),
                          got=ids[max(0, at - 3):at + 5]))


def judge_text(got: Any, expected: str, call: Call) -> None:
    expect_text(got, expected, tr("the decoded text"))


def show_value(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def same_answer(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Whether two outcomes are one answer: pairs and ids as tuples or as lists alike."""
    if a[0] != "value" or b[0] != "value":
        return a == b
    if isinstance(a[1], str) or isinstance(b[1], str):
        return a[1] == b[1]
    for normal in (as_merges, as_ids):
        x, y = normal(a[1]), normal(b[1])
        if x is not None and y is not None:
            return x == y
    return False


def train_hint(call: Call) -> Diagnosis | str:
    if call.outcome[0] == "error" and "max()" in str(call.outcome[1]):
        return Diagnosis.of("\n" + tr("max() found no pair to count: fewer than two ids were "
                                       "left (a text of one token has no pairs)."),
                            hint=tr("stop there, even before vocab_size is reached."))
    return ""


def decode_hint(call: Call) -> Diagnosis | str:
    if call.outcome[0] == "error" and getattr(call.outcome[1], "type", "") == "UnicodeDecodeError":
        return Diagnosis.of("\n" + tr("These bytes are not valid UTF-8 on their own (a "
                                       "character cut in two, say): decode them with "
                                       "errors='replace'."),
                            hint=tr(".decode('utf-8', errors='replace') puts '\\ufffd' there "
                                    "instead of raising."))
    return ""


def contract_for(method: str, cases: Callable[[], dict[str, tuple]], judge: Judge,
                 mistakes: list[Mistake], goldens: bool,
                 hint: Callable[[Call], str] | None = None,
                 refusals: Callable[[], dict[str, Refusal]] | None = None) -> Contract:
    """The contract of one of the problem's three methods, which it names."""
    return Contract(method=method, cases=cases, judge=judge, mistakes=mistakes,
                    matches=same_answer, goldens=goldens, fallback_hint=hint,
                    refusals=refusals)


def train_refusals() -> dict[str, Refusal]:
    return {"vocabulary-too-small": Refusal(
        ("hello", BYTES - 1), "train_bpe('hello', 255)",
        marked("the 256 byte values need ids of their own before any merge"))}


# CONTRACT is the one the goldens and the learners' practice copy are made from.
CONTRACT = contract_for("train_bpe", train_cases, judge_merges, TRAIN_MISTAKES, goldens=True,
                        hint=train_hint, refusals=train_refusals)
ENCODE = contract_for("encode", encode_cases, judge_ids, ENCODE_MISTAKES, goldens=False)
DECODE = contract_for("decode", decode_cases, judge_text, DECODE_MISTAKES, goldens=False,
                      hint=decode_hint)

test_train_fixed, test_train_drawn = CONTRACT.tests(
    "Learning merges from the corpus and from texts where ties, overlaps and bytes matter",
    "Learning merges from random texts and corpus slices, against the reference",
    draw_train)
test_encode_fixed, test_encode_drawn = ENCODE.tests(
    "Encoding the corpus and other texts with merges learned from them",
    "Encoding random texts with merges learned from random texts, against the reference",
    draw_encode)
test_decode_fixed, test_decode_drawn = DECODE.tests(
    "Decoding the corpus' ids, every token, and bytes that are not whole characters",
    "Decoding random ids and encoded texts, against the reference",
    draw_decode)


test_too_small_a_vocabulary = CONTRACT.refusal_test(
    "A vocab_size below 256 is refused with ValueError: every byte needs its id")
