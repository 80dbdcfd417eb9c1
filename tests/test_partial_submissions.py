"""Submissions whose grade is more than pass or fail: which of their checks fail, and why."""

from __future__ import annotations

from conftest import examples


def statuses(run) -> dict[str, str]:
    return {t["name"]: t["status"] for t in run.report["tests"]}


def test_no_cache_gets_the_text_right(grade) -> None:
    """Only the one-token checks catch a loop that never uses the cache."""
    run = grade("kv-cache", "--submission", examples("kv-cache") / "no_cache.py")
    failed = [t["name"] for t in run.report["tests"] if t["status"] != "pass"]
    assert failed and all("one new token per step" in name for name in failed), failed


def test_streamer_is_graded_while_stream_generate_is_unwritten(grade) -> None:
    run = grade("stream", "--submission", examples("stream") / "only_streamer_written.py")
    assert run.code == 1
    for name, status in statuses(run).items():
        assert status == ("pass" if "WordStreamer" in name else "error"), name
    assert "not implemented yet" in run.messages()


def test_stream_generate_is_graded_while_streamer_is_unwritten(grade) -> None:
    run = grade("stream", "--submission",
                examples("stream") / "only_stream_generate_written.py")
    assert run.code == 1
    for name, status in statuses(run).items():
        assert status == ("fail" if "WordStreamer" in name else "pass"), name
    assert "WordStreamer is not written yet" in run.messages()
