"""Stream submissions in other styles pass; known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import ROOT, SUBMISSIONS

EQUIVALENT = [
    "streamer_inside.py",        # stream_generate() reuses its own WordStreamer for words
    "word_by_word_lookahead.py",  # a callback per word; the model runs one step ahead
    "hf_style.py",               # decodes all ids each time; a KV cache in the loop
]

MISTAKES = {
    "fake_streamer.py": "instead of making the whole text first",
    "drops_ends.py": "leave out the character that ends each chunk",
    "end_starts_next.py": "yield a chunk before its end character",
    "forgets_last_chunk.py": "forget the last, unfinished chunk",
    "sentence_as_words.py": "yield words when unit='sentence'",
    "streamer_spaces_only.py": "flush at spaces only",
    "streamer_no_end.py": "leave the rest in the buffer at end()",
    "streamer_tensor_lookup.py": "turn them into a list of ints first",
}


def statuses(run) -> dict[str, str]:
    return {t["name"]: t["status"] for t in run.report["tests"]}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("stream", "--submission", SUBMISSIONS / "stream" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("stream", "--submission", SUBMISSIONS / "stream" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()


def test_starter_fails_in_one_line(grade) -> None:
    run = grade("stream", "--submission", ROOT / "problems" / "14-stream" / "solution.py")
    assert run.code == 1
    assert run.report["problems"][0]["status"] == "error"
    messages = {t["message"] for t in run.report["tests"]}
    assert len(messages) == 1 and "not implemented yet" in messages.pop()


def test_streamer_is_graded_while_stream_generate_is_unwritten(grade) -> None:
    run = grade("stream", "--submission", SUBMISSIONS / "stream" / "only_streamer_written.py")
    assert run.code == 1
    for name, status in statuses(run).items():
        assert status == ("pass" if "WordStreamer" in name else "error"), name
    assert "not implemented yet" in run.messages()


def test_stream_generate_is_graded_while_streamer_is_unwritten(grade) -> None:
    run = grade("stream", "--submission",
                SUBMISSIONS / "stream" / "only_stream_generate_written.py")
    assert run.code == 1
    for name, status in statuses(run).items():
        assert status == ("fail" if "WordStreamer" in name else "pass"), name
    assert "WordStreamer is not written yet" in run.messages()
