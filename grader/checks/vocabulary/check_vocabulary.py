"""Checks for problem 17, vocabulary: characters to token ids."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract, Refusal
from grader.grading.judging.any_result import comparing, expect_tensor
from grader.grading.subject.cases import corpus_prefix
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import ALPHABET
from grader.grading.values.failures import Diagnosis, GradeFailure
from grader.locale import marked, tr
from grader.model import artifacts


def numbering(chars: list[str], start: int = 0) -> dict[str, int]:
    return {c: i for i, c in enumerate(chars, start=start)}


def ids(text: str, char_to_int: dict[str, int], dtype: torch.dtype | None = torch.long):
    return torch.tensor([char_to_int[c] for c in text], dtype=dtype)


def number_in_order_of_appearance(text, corpus):
    return ids(text, numbering(list(dict.fromkeys(corpus))))


def sort_the_corpus_without_removing_repeats(text, corpus):
    return ids(text, numbering(sorted(corpus)))  # a character's id: its last place there


def build_the_vocabulary_from_the_text_instead_of_the_corpus(text, corpus):
    return ids(text, numbering(sorted(set(text))))


def count_the_ids_from_1(text, corpus):
    return ids(text, numbering(sorted(set(corpus)), start=1))


def build_a_float_tensor(text, corpus):
    return torch.Tensor([numbering(sorted(set(corpus)))[c] for c in text])


def build_the_tensor_without_dtype(text, corpus):
    return ids(text, numbering(sorted(set(corpus))), dtype=None)


def store_the_ids_as_int32(text, corpus):
    return ids(text, numbering(sorted(set(corpus))), torch.int32)


def add_a_batch_dimension(text, corpus):
    return ids(text, numbering(sorted(set(corpus)))).view(1, -1)


def return_a_list_instead_of_a_tensor(text, corpus):
    return [numbering(sorted(set(corpus)))[c] for c in text]


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    corpus = artifacts.corpus_text()
    return {
        "a-sentence": ("Lily had a red ball.", corpus),
        "two-lines": (corpus_prefix(60), corpus),
        "empty-text": ("", corpus),
        "whole-vocabulary": ("".join(sorted(set(corpus), reverse=True)), corpus),
        # First appearance h, e, l, o; sorted e, h, l, o.
        "small-corpus": ("hello", "hello"),
        "repeats": ("aaa!a", "a!?a"),
    }


def draw_example(data: st.DataObject) -> tuple:
    corpus = data.draw(st.text(ALPHABET + "\n", min_size=1, max_size=40), label="corpus")
    # A list of the vocabulary's characters, not st.text of them: a second string of
    # another alphabet breaks the shrinker of hypothesis 6.168 (the last for Python 3.10)
    # with "ValueError: 63 is not in list" whenever a wrong encode is being shrunk.
    characters = st.lists(st.sampled_from(sorted(set(corpus))), max_size=30)
    text = data.draw(characters.map("".join), label="text")
    return text, corpus


def renumbered(got: object, text: str, corpus: str) -> bool:
    """Whether `got` gives every character of text one id of its own, consistently,
    among as many ids as the corpus has characters."""
    if not (isinstance(got, torch.Tensor) and got.dim() == 1 and len(got) == len(text)):
        return False
    if len(got) and not bool(((got >= 0) & (got < len(set(corpus)))).all()):
        return False  # nan and inf too
    seen: dict[str, int] = {}
    for char, i in zip(text, got.tolist()):
        if seen.setdefault(char, i) != i:
            return False
    return len(set(seen.values())) == len(seen)


def in_sorted_order(got: torch.Tensor, text: str) -> bool:
    """Whether a consistent numbering gives the text's characters ids that grow as they
    do in sorted order: right but for its dtype, or shifted by a character left out of
    the vocabulary, not numbered in a set's order."""
    ids = [i for _, i in sorted(set(zip(text, got.tolist())))]
    return ids == sorted(ids)


def fallback_hint(call: Call) -> str:
    # A set's order changes from one run of Python to the next, so numbering in
    # set order cannot be reproduced here: recognise any consistent numbering.
    text, corpus = call.args[:2]
    if call.outcome[0] == "value" and renumbered(call.outcome[1], text, corpus) \
            and not in_sorted_order(call.outcome[1], text):
        return Diagnosis.of("\n" + tr("Your ids number the characters consistently, but not "
                                       "in sorted order (the order of a set changes from run "
                                       "to run)."),
                            hint=tr("number sorted(set(corpus))."))
    return ""


UNKNOWN_TEXT = "Zoe met Xavier."  # the shipped corpus has no capital Z or X


def refusals() -> dict[str, Refusal]:
    return {"unknown": Refusal((UNKNOWN_TEXT, artifacts.corpus_text()),
                               f"encode({UNKNOWN_TEXT!r}, corpus)",
                               marked("the corpus has no 'Z' and no 'X', so they have no ids"))}


CONTRACT = Contract(cases=cases, refusals=refusals, mistakes=MISTAKES,
                    fallback_hint=fallback_hint,
                    judge=comparing(expect_tensor, marked("the encoded text"), exact=True))

test_shipped_corpus, test_random_corpora = CONTRACT.tests(
    "Encoding with the vocabulary of a fixed corpus",
    "Encoding random texts with the vocabularies of random corpora, against the reference",
    draw_example)


def test_worked_example(kata: Kata) -> None:
    """A worked example: in the vocabulary of 'banana', 'nab' is 2, 0, 1"""
    got = kata.run(CONTRACT.method, "nab", "banana", arg_names=CONTRACT.arg_names)
    expect_tensor(got, torch.tensor([2, 0, 1]), "encode('nab', 'banana')", exact=True)


def test_unknown_character(kata: Kata) -> None:
    """Characters the corpus never holds are refused with ValueError, naming every one"""
    text, unknown = UNKNOWN_TEXT, ["Z", "X"]
    CONTRACT.expect_refusal(kata, CONTRACT.refused["unknown"])
    error = (kata.last.error or {}) if kata.last else {}
    message = str(error.get("message", ""))
    # The text quoted whole holds every character, named or not: it does not count.
    unnamed = [char for char in unknown if char not in message.replace(text, "")]
    if unnamed:
        others = "".join(tr(", nor {char}", char=repr(char)) for char in unnamed[1:])
        raise GradeFailure(tr("the ValueError for {text} does not name the character "
                              "{char}{others}: say which characters are missing, every one of "
                              "them, so the reader can fix the text in one go",
                              text=repr(text), char=repr(unnamed[0]), others=others))
