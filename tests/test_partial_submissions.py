"""Submissions whose grade is more than pass or fail: which of their checks fail, and why."""

from __future__ import annotations

from learner_examples import example


def statuses(run) -> dict[str, str]:
    return {t["name"]: t["status"] for t in run.report["tests"]}


def test_no_cache_gets_the_text_right(grade, tmp_path) -> None:
    """Only the one-token checks catch a loop that never uses the cache."""
    run = grade("kv-cache", "--submission", example("kv-cache", "no_cache.py", tmp_path))
    failed = [t["name"] for t in run.report["tests"] if t["status"] != "pass"]
    assert failed and all("one new token per step" in name for name in failed), failed


def test_streamer_is_graded_while_stream_generate_is_unwritten(grade, tmp_path) -> None:
    run = grade("stream", "--submission", example("stream", "only_streamer_written.py", tmp_path))
    assert run.code == 1
    for name, status in statuses(run).items():
        assert status == ("pass" if "WordStreamer" in name else "error"), name
    assert "not implemented yet" in run.messages()


def test_stream_generate_is_graded_while_streamer_is_unwritten(grade, tmp_path) -> None:
    run = grade("stream", "--submission",
                example("stream", "only_stream_generate_written.py", tmp_path))
    assert run.code == 1
    for name, status in statuses(run).items():
        assert status == ("fail" if "WordStreamer" in name else "pass"), name
    assert "WordStreamer is not written yet" in run.messages()
