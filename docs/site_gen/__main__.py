"""`python docs/site_gen`: write the pictures and the statement pages into
docs/pages/ without building the site, as MkDocs' hook does at each build, and
docs/zensical.yml: mkdocs.yml with the statements in its navigation. Zensical runs
no MkDocs hooks, so it builds the whole site with

    python docs/site_gen && zensical build --strict -f docs/zensical.yml

(docs/pages/contributors/site.md). All three are ignored by git.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hooks import generate, with_section  # noqa: E402

DOCS = Path(__file__).resolve().parents[1]
HEADER = ("# Written by `python docs/site_gen` (ignored by git): mkdocs.yml, with the\n"
          "# statements' section of the navigation that MkDocs' hook adds at each build.\n")


class ConfigLoader(yaml.SafeLoader):
    """YAML's safe loader, reading a Python tag of mkdocs.yml (the headings' slugify) as
    nothing: only the navigation is read here, and MkDocs or Zensical loads the rest."""


ConfigLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)


def zensical_config(section: list) -> str:
    config = yaml.load((DOCS / "mkdocs.yml").read_text(encoding="utf-8"), ConfigLoader)
    nav = with_section(config["nav"], section)
    return HEADER + yaml.safe_dump({"INHERIT": "mkdocs.yml", "nav": nav},
                                   allow_unicode=True, sort_keys=False)


if __name__ == "__main__":
    pages = DOCS / "pages"
    section = generate(pages)
    (DOCS / "zensical.yml").write_text(zensical_config(section), encoding="utf-8")
    print(f"wrote {pages / 'figures'}, {pages / 'problems'} and {DOCS / 'zensical.yml'}")
