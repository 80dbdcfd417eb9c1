"""The instructor's seed never reaches a submission, even graded without the sandbox
(--no-sandbox, or --allow-unisolated where the system has none): a submission that
read it could draw the very examples it is graded on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from grader.grading.subject.examples_seed import SEED_VARIABLE
from grader.sandbox.host.handles import GRADER_SECRETS
from grader.sandbox.host.pool import SPAWN_VARIABLE, WorkerPool
from grader.sandbox.host.process import SubmissionProcess

LINUX = sys.platform.startswith("linux")

READER = """\
import os


class Solution:
    def seed(self):
        return os.environ.get({name!r}, "not set")
"""


def test_the_seed_is_among_the_secrets_kept_from_workers() -> None:
    assert SEED_VARIABLE in GRADER_SECRETS


@pytest.mark.parametrize("spawned", [False, True] if LINUX else [True],
                         ids=lambda spawned: "spawned" if spawned else "forked")
def test_an_unsandboxed_worker_is_not_handed_the_seed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spawned: bool) -> None:
    monkeypatch.setenv(SEED_VARIABLE, "the instructor's secret")
    # Another variable of the grader's is handed on as before: only secrets are kept back.
    monkeypatch.setenv("GPT_KATA_TEST_PLAIN", "plain")
    if spawned:
        monkeypatch.setenv(SPAWN_VARIABLE, "1")
    else:
        monkeypatch.delenv(SPAWN_VARIABLE, raising=False)
    reader = tmp_path / "reader.py"
    reader.write_text(READER.format(name=SEED_VARIABLE) + "\n    def plain(self):\n"
                      "        return os.environ.get('GPT_KATA_TEST_PLAIN', 'not set')\n")
    with WorkerPool(sandbox=None) as pool:
        process = SubmissionProcess(str(reader), "Solution", ["seed", "plain"], pool)
        assert process.load() is None
        seed = process.call("seed", ())
        plain = process.call("plain", ())
        process.close()
    assert seed.error is None and plain.error is None, (seed.error, plain.error)
    assert seed.result == "not set"
    assert plain.result == "plain"
