"""What graded a report, for a reader who must trust it later: the grader's version
and commit, how the learner's code was isolated, the sha256 of each graded file, the
versions of the packages that decide a grade, and when.

The commit is `git describe` of the grader's own checkout, asked of that
checkout's .git alone (never a repository around the graded files, such as a
learner's clone); an installed grader has no checkout and names its version only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import datetime, timezone
from functools import cache
from importlib import metadata
from pathlib import Path

from grader import paths

PACKAGES = ("torch", "pytest", "hypothesis")


def version_of(name: str) -> str | None:
    """An installed package's version, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@cache
def grader_commit() -> str | None:
    """`git describe --always --dirty` of the grader's checkout, or None."""
    root = paths.PACKAGE.parent
    git_dir = root / ".git"
    if paths.INSTALLED or not git_dir.exists():
        return None
    # Only this checkout's repository: no GIT_DIR or the like from the environment.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(
            ["git", f"--git-dir={git_dir}", f"--work-tree={root}", "describe", "--always",
             "--dirty", "--tags"], capture_output=True, text=True, timeout=10, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def sha256_of(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def provenance(files: dict[str, Path], isolation: list[str], mode: str) -> dict:
    """The report's `provenance`: `files` maps each graded problem's folder to the file
    graded for it."""
    return {
        "grader": {"version": version_of("gpt-kata"), "commit": grader_commit()},
        "mode": mode,
        "isolation": list(isolation),
        "files": {folder: sha256_of(path) for folder, path in sorted(files.items())},
        "packages": {name: version_of(name) for name in PACKAGES},
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds").replace(
            "+00:00", "Z"),
    }
