"""An instructor's mistake in the gradebook's options is one line, before any grading:
never a traceback, never a class graded for nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.cli.main import main


@pytest.fixture
def roster(tmp_path: Path) -> Path:
    (tmp_path / "roster" / "ada").mkdir(parents=True)
    (tmp_path / "a-file").write_text("not a folder")
    (tmp_path / "ids.csv").write_bytes(b"learner,name\n\xff\xfe\n")
    (tmp_path / "shard").mkdir()
    (tmp_path / "shard" / "gradebook.csv").write_bytes(b"learner,score\n\xff\n")
    return tmp_path


def exit_code(args: list[str]) -> int | str | None:
    """main()'s code: what it returns, or what argparse exits with."""
    try:
        return main(args)
    except SystemExit as exited:
        return exited.code


@pytest.mark.parametrize(("args", "says"), [
    (["--out", "a-file"], "--out a-file is a file; name a folder"),
    (["--out", "out", "--canvas", "."], "--canvas . is a folder; name a file"),
    (["--out", "out", "--lms-ids", "ids.csv"], "--lms-ids ids.csv: not a CSV file in UTF-8"),
    (["--out", "out", "--late-policy", "grace:9999999999d"], "a grace period of at most"),
    (["--out", "out", "--deadline", "0001-01-01T00:00+01:00"], "a deadline between 1970"),
])
def test_a_bad_option_is_one_line_before_grading(args: list[str], says: str, roster: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(roster)
    assert exit_code(["gradebook", "roster", "decode", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err, err
    assert not (roster / "out").exists()  # nothing graded


def test_a_merge_of_a_gradebook_that_is_not_utf8_is_one_line(
        roster: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(roster)
    assert exit_code(["gradebook", "--merge", "shard", "--out", "merged"]) == 2
    err = capsys.readouterr().err
    assert "is not a gradebook" in err and "Traceback" not in err, err
