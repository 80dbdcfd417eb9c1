"""The site's pictures drawn by the project's own code at each build."""

from __future__ import annotations

from pathlib import Path


def write(pages: Path) -> dict[str, list[str]]:
    return {}
