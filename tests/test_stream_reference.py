"""The stream reference on examples worked out by hand, and the check's streaming rule."""

from __future__ import annotations

import pytest
import torch
from conftest import ROOT, module_from, reference_module

reference = reference_module("14-stream")
checks = module_from(ROOT / "grader/checks/stream/check_stream.py", "stream_checks")

ITC = {0: "a", 1: " ", 2: "b", 3: ".", 4: "\n"}
NEXT = {0: 1, 1: 2, 2: 3, 3: 4, 4: 0}  # "a b.\na b.\n..."


class Successor(torch.nn.Module):
    """Always predicts NEXT[last token], with certainty; counts its calls."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, context):
        self.calls += 1
        logits = torch.full((*context.shape, len(ITC)), float("-inf"))
        for t, token in enumerate(context[0].tolist()):
            logits[0, t, NEXT[token]] = 0.0
        return logits


def streamed(puts):
    got = []
    streamer = reference.WordStreamer(ITC, got.append)
    for ids in puts:
        streamer.put(ids)
        got.append("|")  # marks the end of each put()
    streamer.end()
    return got


def test_streamer_holds_back_the_unfinished_word():
    assert streamed([[0], [1], [2, 3], [4, 0], torch.tensor([[1, 2]])]) == [
        "|", "a ", "|", "|", "b.\n", "|", "a ", "|", "b"]


def test_streamer_takes_any_tensor_shape():
    assert streamed([torch.tensor(0), torch.tensor([1]), torch.zeros(1, 0, dtype=torch.long),
                     torch.tensor([[2]])]) == ["|", "a ", "|", "|", "|", "b"]


def test_streamer_flushes_a_newline_without_a_space_after_it():
    assert streamed([[2, 3, 4, 0]]) == ["b.\n", "|", "a"]


def test_streamer_end_with_nothing_left_calls_nothing():
    assert streamed([[0, 1]]) == ["a ", "|"]
    assert streamed([]) == []


def chunks(new_chars, unit):
    model = Successor()
    out = []
    for chunk in reference.Solution().stream_generate(model, new_chars, torch.tensor([[0]]), 3,
                                                      ITC, unit):
        out.append((chunk, model.calls))
    return out


def test_words_come_out_as_soon_as_they_end():
    # From "a" the model writes " b.\na b.\n": character 0 ends a word, then 3, 5, 8.
    assert chunks(9, "word") == [(" ", 1), ("b.\n", 4), ("a ", 6), ("b.\n", 9)]


def test_sentences_end_at_the_full_stop():
    assert chunks(9, "sentence") == [(" b.", 3), ("\na b.", 8), ("\n", 9)]


def test_nothing_to_make_yields_nothing():
    assert chunks(0, "word") == []


def test_an_unknown_unit_raises():
    with pytest.raises(ValueError):
        chunks(3, "paragraph")


def test_split_chunks():
    assert checks.split_chunks("Hi. Yo! a b\nc", "word") == ["Hi. ", "Yo! ", "a ", "b\n", "c"]
    assert checks.split_chunks("Hi. Yo! a b\nc", "sentence") == ["Hi.", " Yo!", " a b\nc"]
    assert checks.split_chunks("", "word") == []


def passes(pairs, total):
    try:
        checks.expect_streamed(pairs, total)
    except AssertionError:
        return False
    return True


CHUNKS = ["ab ", "c ", "d ", "e"]  # end after characters 3, 5, 7 and 8


@pytest.mark.parametrize("counts, total, ok", [
    ([3, 5, 7, 8], 8, True),       # one call a step, yield right away
    ([4, 6, 8, 8], 8, True),       # the next step's call before each yield
    ([4, 6, 8, 9], 9, True),       # ... and one extra call at the very end
    ([13, 15, 17, 18], 18, True),  # the prompt's 10 tokens fed one call each first
    ([6, 10, 14, 16], 16, True),   # two calls a step
    ([8, 8, 8, 8], 8, False),      # the whole text first
    ([5, 5, 8, 8], 8, False),      # two chunks held back for later characters
])
def test_streaming_rule(counts, total, ok):
    assert passes(list(zip(CHUNKS, counts)), total) is ok


@pytest.mark.parametrize("chunks, new_chars, opening", [
    (["a ", "a b ", "a b c"], 5, "chunk 2 is 'a b ', which starts with all of chunk 1"),
    # a text of one word end: the last flush yields the unemptied chunk again
    ([" ", " "], 1, "chunk 2 is ' ', chunk 1 again"),
])
def test_a_chunk_that_repeats_the_one_before_is_named(chunks, new_chars, opening):
    with pytest.raises(checks.GradeFailure) as failure:
        checks.expect_no_repeats(chunks, new_chars)
    assert str(failure.value.message).startswith(opening)
    assert "each chunk repeats the text yielded before it" in failure.value.message


def test_the_same_word_twice_is_no_repeat():
    checks.expect_no_repeats(["a ", "a "], 4)  # "a a ": nothing made twice
