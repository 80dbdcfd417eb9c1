"""Tests for the grammar corpus and its checker (grader/model/corpus.py)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.model.corpus import (
    ADJECTIVES,
    ADVERBS,
    CREATURES,
    INTRANSITIVE_VERBS,
    MOODS,
    NAMES,
    PLACES,
    THINGS,
    TRANSITIVE_VERBS,
    generate_corpus,
    is_well_formed,
    split_sentences,
    well_formed_fraction,
)

HYPOTHESIS = settings(derandomize=True, database=None, deadline=None, max_examples=40)


@pytest.fixture(scope="module")
def corpus() -> str:
    return generate_corpus()


@pytest.fixture(scope="module")
def sentences(corpus: str) -> list[str]:
    return split_sentences(corpus)


def test_same_seed_gives_same_text() -> None:
    assert generate_corpus(seed=3, target_bytes=20_000) == generate_corpus(
        seed=3, target_bytes=20_000
    )


def test_different_seeds_give_different_text() -> None:
    assert generate_corpus(seed=0, target_bytes=20_000) != generate_corpus(
        seed=1, target_bytes=20_000
    )


def test_default_is_seed_zero(corpus: str) -> None:
    assert generate_corpus(seed=0, target_bytes=500_000) == corpus


def test_default_size(corpus: str) -> None:
    size = len(corpus.encode("ascii"))  # also proves the text is pure ASCII
    assert 200_000 <= size <= 1_000_000
    # It stops at the first story reaching the target, so it overshoots by under one line.
    longest_line = max(len(line) for line in corpus.splitlines(keepends=True))
    assert 500_000 <= size < 500_000 + longest_line


def test_vocabulary(corpus: str) -> None:
    vocab = set(corpus)
    assert 30 <= len(vocab) <= 70
    assert {"\n", " ", ".", ",", "!", "?"} <= vocab
    assert vocab <= set("\n !',.?abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def test_lines_are_stories_of_two_to_six_sentences(corpus: str) -> None:
    assert corpus.endswith("\n")
    lines = corpus.splitlines(keepends=True)
    assert len(lines) > 1000
    counts: Counter[int] = Counter()
    for line in lines:
        assert line.endswith("\n") and line.count("\n") == 1
        n = len(split_sentences(line))
        assert 2 <= n <= 6, line
        assert line[-2] in ".!?"  # nothing follows the last sentence
        counts[n] += 1
    assert set(counts) == {2, 3, 4, 5, 6}


def test_every_default_sentence_is_well_formed(corpus: str, sentences: list[str]) -> None:
    assert len(sentences) > 10_000
    bad = [s for s in sentences if not is_well_formed(s)]
    assert bad == []
    assert well_formed_fraction(corpus) == (len(sentences), len(sentences))


def test_sentences_are_short_enough_for_a_64_char_context(sentences: list[str]) -> None:
    lengths = [len(s) for s in sentences]
    assert sum(n <= 60 for n in lengths) / len(lengths) >= 0.95
    assert max(lengths) <= 80


def test_every_word_of_the_word_lists_is_used(corpus: str) -> None:
    lists = (NAMES, CREATURES, THINGS, ADJECTIVES, MOODS, TRANSITIVE_VERBS,
             INTRANSITIVE_VERBS, ADVERBS, PLACES)  # fmt: skip
    for words in lists:
        for word in words:
            assert re.search(rf"\b{word}\b", corpus), word


def test_articles_never_need_an() -> None:
    for word in CREATURES + THINGS + ADJECTIVES:
        assert word[0] not in "aeiou", word


def test_sentence_forms_all_occur(sentences: list[str]) -> None:
    starts = Counter(s.split(" ")[0] for s in sentences)
    for start in ("Once", "There", "Where", "Who", "What", "One", "The", "A", "He", "Tom"):
        assert starts[start] > 0, start
    assert any(s.endswith("?") for s in sentences)
    assert any(s.endswith("!") for s in sentences)
    assert any(", and then " in s for s in sentences)
    assert any(" because " in s for s in sentences)


def test_many_words_can_follow_a_common_prefix(corpus: str) -> None:
    after_the = set(re.findall(r"(?:^| )the ([a-z]+)", corpus, flags=re.MULTILINE))
    assert len(after_the) >= 30
    after_the_capital = set(re.findall(r"(?:^| )The ([a-z]+)", corpus, flags=re.MULTILINE))
    assert len(after_the_capital) >= 10
    after_a_name = set(re.findall(r"\bTom ([a-z]+)", corpus))
    assert len(after_a_name) >= 15
    sentence_starts = {s.split(" ")[0] for s in split_sentences(corpus)}
    assert len(sentence_starts) >= 15


@HYPOTHESIS
@given(seed=st.integers(min_value=0, max_value=2**32), target=st.integers(0, 3_000))
def test_anything_generated_is_well_formed(seed: int, target: int) -> None:
    text = generate_corpus(seed=seed, target_bytes=target)
    assert len(text) >= target and text.endswith("\n")
    lines = text.splitlines()
    assert all(2 <= len(split_sentences(line)) <= 6 for line in lines)
    good, total = well_formed_fraction(text)
    assert good == total >= 2


@HYPOTHESIS
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_neighbouring_seeds_give_different_stories(seed: int) -> None:
    # A single story already has enough branching that adjacent seeds do not collide.
    a = generate_corpus(seed=seed, target_bytes=0)
    b = generate_corpus(seed=seed + 1, target_bytes=0)
    assert a != b


@pytest.mark.parametrize(
    "sentence",
    [
        "The cat saw the dog.",
        "Tom ran.",
        "She walked quickly in the woods!",
        "Once upon a time, there was a little fox.",
        "There was a sleepy bear named Mia.",
        "There was a duck by the river.",
        "Where is the red ball?",
        "Where is Lily?",
        "Who found the key?",
        "What a big cake!",
        "One day, the pig sang again.",
        "Then Anna hugged him.",
        "A brave king held the star because he felt proud.",
        "The mouse took a kite, and then danced.",
        "Max smiled when they jumped.",
    ],
)
def test_hand_written_good_sentences(sentence: str) -> None:
    assert is_well_formed(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The cat saw teh dog.",  # misspelling
        "the cat saw the dog.",  # lowercase start
        "The cat saw  the dog.",  # double space
        " The cat saw the dog.",  # leading space
        "The cat saw the dog. ",  # trailing space
        "The cat saw the dog",  # no final punctuation
        "The cat saw the dog..",  # doubled punctuation
        "The cat saw the dog,",  # wrong final punctuation
        "The cat saw the dog?",  # statement ending as a question
        "Cat the saw the dog.",  # swapped word order
        "The saw cat the dog.",  # verb in the noun slot
        "The cat saw the elephant.",  # unknown word
        "The ball saw the dog.",  # a thing cannot be a subject
        "The Cat saw the dog.",  # stray capital
        "The cat saw tom.",  # lowercase name
        "They was sad.",  # not in the grammar
        "Where is him?",  # pronoun where a noun phrase belongs
        "What a big cake.",  # exclamation form needs "!"
        "The cat saw the dog, and then.",  # unfinished clause
        "The cat saw the dog\n",  # newline inside
        "",
    ],
)
def test_hand_written_bad_sentences(sentence: str) -> None:
    assert not is_well_formed(sentence)


def test_split_sentences_drops_unfinished_tail() -> None:
    text = "Tom ran. Where is Mia? What a big cat! The dog saw th"
    assert split_sentences(text) == ["Tom ran.", "Where is Mia?", "What a big cat!"]


def test_split_sentences_splits_lines_and_keeps_stray_spaces() -> None:
    text = "Tom ran. The cat sl\nMia sang.  He cried.\n\nno end here"
    assert split_sentences(text) == ["Tom ran.", "Mia sang.", " He cried."]
    assert split_sentences("") == []
    assert split_sentences("There was a") == []


def test_well_formed_fraction_counts() -> None:
    text = (
        "Tom ran. The cat saw teh dog. Where is Mia?\n"
        "what a big cat! She slept quietly. The dog ran to"
    )
    assert well_formed_fraction(text) == (3, 5)
    assert well_formed_fraction("") == (0, 0)
    assert well_formed_fraction("Tom ran") == (0, 0)
