"""docs/mkdocs.yml read as MkDocs reads it, for the tests that check the site's pages
without building it: its Python tags (the headings' slugify) are MkDocs' to load."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

CONFIG = Path(__file__).resolve().parents[1] / "docs" / "mkdocs.yml"


@cache
def mkdocs_config() -> dict[str, Any]:
    loader = pytest.importorskip("mkdocs.utils.yaml",
                                 reason="MkDocs is not installed (the dev extra has it)")
    with CONFIG.open(encoding="utf-8") as config:
        return loader.yaml_load(config)


def heading_slug(words: str) -> str:
    """The anchor the site gives a heading of these words: mkdocs.yml's slugify."""
    toc = next(e["toc"] for e in mkdocs_config()["markdown_extensions"]
               if isinstance(e, dict) and "toc" in e)
    return toc["slugify"](words, "-")
