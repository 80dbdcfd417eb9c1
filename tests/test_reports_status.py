""".gpt-kata/status.json: a write cut short keeps the last status, and a file that
cannot be read is kept aside and said so once, never silently forgotten."""

from __future__ import annotations

import errno
import json
import tempfile

import pytest

from grader import paths
from grader.learner import status


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "STATE", tmp_path / ".gpt-kata")
    monkeypatch.setattr(status, "_reported", set(), raising=False)
    return tmp_path / ".gpt-kata"


def test_a_write_cut_short_keeps_the_last_status(state, monkeypatch):
    status.save_status({"decode": {"status": "pass", "sha256": "a"}})
    before = (state / "status.json").read_text()
    real = tempfile.NamedTemporaryFile

    class FullDisk:
        """A file that takes half of what it is given, then finds the disk full."""

        def __init__(self, *args, **kwargs):
            self.handle = real(*args, **kwargs)
            self.name = self.handle.name

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, text):
            self.handle.write(text[: len(text) // 2])
            self.handle.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", FullDisk)
    status.save_status({"generate": {"status": "fail", "sha256": "b"}})
    assert (state / "status.json").read_text() == before
    assert [p.name for p in state.iterdir()] == ["status.json"]  # no half-written file left


def test_a_status_file_that_cannot_be_read_is_kept_and_reported_once(state, capsys):
    state.mkdir()
    (state / "status.json").write_bytes(b'{"decode": {"status": "pa')  # torn by an old writer
    assert status.load_status() == {}
    assert status.load_status() == {}
    err = capsys.readouterr().err
    assert err.count("could not be read") == 1 and "Traceback" not in err
    (kept,) = state.glob("status.json.*.corrupt")
    assert kept.read_bytes() == b'{"decode": {"status": "pa'
    status.save_status({"decode": {"status": "fail"}})
    assert json.loads((state / "status.json").read_text()) == {"decode": {"status": "fail"}}
    assert kept.exists()


@pytest.mark.parametrize("content", [b"[1, 2]", b"\xff\xfe not utf-8", b"null"])
def test_any_unreadable_status_is_kept_aside(state, capsys, content):
    state.mkdir()
    (state / "status.json").write_bytes(content)
    assert status.load_status() == {}
    assert [p.read_bytes() for p in state.glob("status.json.*.corrupt")] == [content]
    assert "could not be read" in capsys.readouterr().err
