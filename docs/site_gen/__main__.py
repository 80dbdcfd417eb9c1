"""`python docs/site_gen`: write the pictures and the statement pages into
docs/pages/ without building the site, as MkDocs' hook does at each build (for
another generator, or to look at them)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hooks import generate  # noqa: E402

if __name__ == "__main__":
    pages = Path(__file__).resolve().parents[1] / "pages"
    generate(pages)
    print(f"wrote {pages / 'figures'} and {pages / 'problems'}")
