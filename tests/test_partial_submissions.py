"""Submissions whose grade is more than pass or fail: which of their checks fail, and why."""

from __future__ import annotations

from conftest import messages
from learner_examples import example, mistake


def statuses(report: dict) -> dict[str, str]:
    return {t["name"]: t["status"] for t in report["tests"]}


def test_no_cache_gets_the_text_right(grade_here, tmp_path) -> None:
    """Only the one-token checks catch a loop that never uses the cache."""
    report = grade_here("kv-cache", mistake("kv-cache", "no_cache", tmp_path))
    failed = [t["name"] for t in report["tests"] if t["status"] != "pass"]
    assert failed and all("one new token per step" in name for name in failed), failed


def test_streamer_is_graded_while_stream_generate_is_unwritten(grade_here, tmp_path) -> None:
    report = grade_here("stream", example("stream", "only_streamer_written.py", tmp_path))
    assert report["status"] != "pass"
    for name, status in statuses(report).items():
        assert status == ("pass" if "WordStreamer" in name else "error"), name
    assert "not implemented yet" in messages(report)


def test_stream_generate_is_graded_while_streamer_is_unwritten(grade_here, tmp_path) -> None:
    report = grade_here("stream", example("stream", "only_stream_generate_written.py", tmp_path))
    assert report["status"] == "fail"
    for name, status in statuses(report).items():
        assert status == ("fail" if "WordStreamer" in name else "pass"), name
    assert "WordStreamer is not written yet" in messages(report)
