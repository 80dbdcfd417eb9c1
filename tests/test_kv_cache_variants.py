"""KV-cache submissions in other styles pass; known mistakes fail with their hint."""

from __future__ import annotations

import pytest
from conftest import ROOT, SUBMISSIONS

EQUIVALENT = [
    "well_known_style.py",
    "prefill_then_step.py",      # caches all but the last token, then feeds that one
    "no_cache_after_full.py",    # plain model() calls once the window is full
]

MISTAKES = {
    "no_rebuild.py": "keep adding to the cache when the window is full",
    "drop_oldest.py": "drop the oldest cache entry when the window is full",
    "no_cache.py": "feed the whole context at every step",
    "cache_not_passed.py": "feed the new token without the cache",
    "no_prompt_crop.py": "do not crop a prompt longer than context_length",
}


@pytest.mark.parametrize("name", EQUIVALENT)
def test_equivalent_style_passes(grade, name: str) -> None:
    run = grade("kv-cache", "--submission", SUBMISSIONS / "kv-cache" / name)
    assert run.code == 0, run.messages() or run.stderr
    assert run.report["status"] == "pass"


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_known_mistake_fails_with_its_hint(grade, name: str) -> None:
    run = grade("kv-cache", "--submission", SUBMISSIONS / "kv-cache" / name)
    assert run.code == 1
    assert run.report["status"] == "fail"
    assert MISTAKES[name] in run.messages()


def test_no_cache_gets_the_text_right(grade) -> None:
    """Only the one-token checks catch a loop that never uses the cache."""
    run = grade("kv-cache", "--submission", SUBMISSIONS / "kv-cache" / "no_cache.py")
    failed = [t["name"] for t in run.report["tests"] if t["status"] != "pass"]
    assert failed and all("one new token per step" in name for name in failed), failed


def test_starter_fails_in_one_line(grade) -> None:
    run = grade("kv-cache", "--submission", ROOT / "problems" / "15-kv-cache" / "solution.py")
    assert run.code == 1
    assert run.report["problems"][0]["status"] == "error"
    messages = {t["message"] for t in run.report["tests"]}
    assert len(messages) == 1 and "not implemented yet" in messages.pop()
