"""The learners' copy's talk: what it says when a file it runs has not passed."""

from __future__ import annotations

import pytest

from grader.learner import status
from grader.learner.errors import UsageError
from grader.learner.tools import practice_talk


def test_a_refusal_names_what_talk_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--stream word` streams through the learner's WordStreamer; the copy does not
    practise stream_generate(), so a refusal that named it would send them to the
    wrong part of their file."""
    monkeypatch.setattr(status, "learner_status", lambda problem: "fail")
    with pytest.raises(UsageError) as refused:
        practice_talk.passing("stream", uses="WordStreamer")
    assert "runs your 14-stream's WordStreamer, which has not passed" in str(refused.value)
    assert "stream_generate" not in str(refused.value)
    with pytest.raises(UsageError, match=r"runs your 16-sampler's sample_text\(\)"):
        practice_talk.passing("sampler")
