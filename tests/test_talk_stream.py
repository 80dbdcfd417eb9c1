"""`gpt-kata talk --stream word|sentence`: the text of a plain talk (problem 16's
sample_text(), seeded once, with the seed it names), shown in pieces, so that it does
not go round in circles as stream_generate()'s does (built on generate(), whose
generator is put back after every draw)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest
from learner import learner_kata

from grader.learner.tools.talk import Implementation, choose_model, sampled, sentences
from grader.model import artifacts
from grader.registry import find
from grader.sandbox.host.pool import WorkerPool

SEED = re.compile(r"; seed (\d+): `--seed \1` gives this text again\]$", re.MULTILINE)
PROMPT = "Once upon a time,"


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """A learner who has solved nothing: the references talk, whoever works in problems/."""
    return learner_kata(tmp_path_factory.mktemp("fresh"))


def talk(folder: Path, *args: str) -> subprocess.CompletedProcess:
    # The text alone on stdout; the labels on stderr.
    done = subprocess.run([sys.executable, "-m", "grader", "talk", *args],
                          capture_output=True, text=True, timeout=600, cwd=folder)
    assert done.returncode == 0, done.stderr
    return done


def text_of(done: subprocess.CompletedProcess) -> str:
    return done.stdout.removesuffix("\n")  # talk's own newline; the text may end in one


def test_a_streamed_talk_does_not_go_round_in_circles(fresh):
    by_sentence = talk(fresh, PROMPT, "--chars", "600", "--seed", "0", "--stream", "sentence")
    assert "sample_text()" in by_sentence.stderr and "a sentence at a time" in by_sentence.stderr
    text = text_of(by_sentence)
    said = re.split(r"(?<=[.!?])\s+", text.removeprefix(PROMPT))
    assert len(said) >= 15
    assert len(set(said)) >= 0.8 * len(said), said
    # A word at a time, and not streamed at all: the same text from the same seed.
    by_word = talk(fresh, PROMPT, "--chars", "600", "--seed", "0", "--stream", "word")
    assert "WordStreamer" in by_word.stderr
    assert text_of(by_word) == text
    assert text_of(talk(fresh, PROMPT, "--chars", "600", "--seed", "0")) == text


@pytest.mark.parametrize("unit", ["sentence", "word"])
def test_a_streamed_talk_without_a_seed_names_the_seed_that_gives_its_text_again(fresh, unit):
    done = talk(fresh, PROMPT, "--chars", "200", "--stream", unit)
    found = SEED.search(done.stderr)
    assert found, done.stderr
    again = talk(fresh, PROMPT, "--chars", "200", "--seed", found.group(1))
    assert text_of(again) == text_of(done)


def test_sentences_end_right_after_a_full_stop_an_exclamation_or_a_question_mark():
    assert sentences("Tom ran. Who? Yes!! The en") == ["Tom ran.", " Who?", " Yes!", "!",
                                                       " The en"]
    assert sentences(" A cat.") == [" A cat."]
    assert sentences("") == []


def pieces(unit: str, chars: int, seed: int) -> tuple[list[str], str]:
    """What `sampled` yields with the references, and sample_text's whole text."""
    from grader.grading.subject.reference import load_reference

    talker = choose_model("shipped")
    context = artifacts.encode(PROMPT, talker.int_to_char)
    args = argparse.Namespace(chars=chars, temperature=None, top_k=None, top_p=None,
                              no_repeat_ngram=None, seed=seed, stream=unit)
    pool = WorkerPool(fork=False)  # the references run here, in the grader
    sampler = Implementation(find("sampler"), False, pool)
    streamer = Implementation(find("stream"), False, pool) if unit == "word" else None
    chunks = list(sampled(args, context, talker, sampler, streamer, seed))
    whole = load_reference(find("sampler")).sample_text(
        artifacts.shipped_model(), context, chars, talker.context_length, talker.int_to_char,
        1.0, 0, 1.0, 0, None, seed)
    return chunks, whole


def test_sentences_come_one_a_piece_and_words_through_the_word_streamer():
    chunks, whole = pieces("sentence", 300, 7)
    assert "".join(chunks) == whole and len(chunks) >= 5
    assert all(chunk[-1] in ".!?" for chunk in chunks[:-1]), chunks
    assert not any(mark in chunk[:-1] for chunk in chunks for mark in ".!?"), chunks
    words, whole = pieces("word", 300, 7)
    assert "".join(words) == whole and len(words) > len(chunks)
    assert all(word[-1] in " \n" for word in words[:-1]), words
