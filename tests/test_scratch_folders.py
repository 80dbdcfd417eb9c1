"""Removing a worker's scratch folder removes it whole, and changes nothing outside it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from grader.sandbox.host.scratch_folders import remove_tree


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_a_folder_already_gone_leaves_its_parent_as_it_was(tmp_path: Path) -> None:
    # The parent stands for the temporary folder every user shares (/tmp is 1777).
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    remove_tree(str(shared / "gpt-kata-grade-gone"))
    assert mode_of(shared) == 0o1777


def test_read_only_folders_and_files_are_removed(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    (scratch / "deep" / "er").mkdir(parents=True)
    (scratch / "deep" / "er" / "file").write_text("x")
    (scratch / "deep" / "er" / "file").chmod(0o400)
    (scratch / "deep" / "er").chmod(0o500)
    (scratch / "deep").chmod(0o500)
    remove_tree(str(scratch))
    assert not scratch.exists()
    assert mode_of(tmp_path) == 0o700  # pytest's own, untouched


def test_a_link_that_resists_removal_changes_no_mode_where_it_points(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """chmod follows links: a worker's link to a file of the grader's must not have
    that file's mode changed when the link is removed again."""
    outside = tmp_path / "grader-file"
    outside.write_text("the grader's")
    outside.chmod(0o644)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    link = scratch / "link"
    link.symlink_to(outside)
    unlink, refused = os.unlink, []

    def unlink_once_refused(name, *args, **kwargs):  # noqa: ANN001, ANN202 - os.unlink's
        if os.fsdecode(name) in ("link", str(link)) and not refused:
            refused.append(name)
            raise PermissionError(13, "Permission denied", str(name))
        return unlink(name, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink_once_refused)
    remove_tree(str(scratch))
    assert refused, "the removal never met the refusal this test sets up"
    assert not scratch.exists()
    assert outside.read_text() == "the grader's" and mode_of(outside) == 0o644
