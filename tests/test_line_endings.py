"""A checkout on Windows, whose Git converts line endings to CRLF by default (GitHub's
Windows runners' too), gets the shipped files byte for byte as committed: their
sha256 in data/manifest.json must hold there as well (.gitattributes)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import ROOT

from grader.model import artifacts

pytestmark = pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                                reason="needs git and the repository's own checkout")


def git(*args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, check=check)


@pytest.mark.parametrize("path", artifacts.SHIPPED_FILES, ids=lambda p: p.name)
def test_a_windows_checkout_keeps_each_shipped_file_as_committed(path) -> None:
    name = path.relative_to(ROOT).as_posix()
    committed = git("cat-file", "blob", f"HEAD:{name}", check=False)
    if committed.returncode != 0:
        pytest.skip(f"{name} is not committed yet")
    # What `git checkout` writes with core.autocrlf=true, Git for Windows' default.
    checked_out = git("-c", "core.autocrlf=true", "cat-file", "--filters", f"HEAD:{name}")
    assert checked_out.stdout == committed.stdout, f"{name}: other line endings"
