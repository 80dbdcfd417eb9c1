"""The site's search, one index per language.

Material's search reads one file, `search/search_index.json` under the page's
`base` (the site's root, in the `__config` script of every page), and the i18n
plugin builds each language's pages into the same site: left to themselves, the
Chinese pages search an index that the plugin fills with both languages' pages, and
a Chinese reader is shown English pages among, or before, the Chinese ones.

So each language other than the default gets its own site root, as Material expects
of a site in one language: its pages' `base` is their language's folder (zh/), its
index is `zh/search/search_index.json`, holding its own pages with their places
written from that folder, and the root's index holds the default language's pages
alone. The pages a language shows in the default language's words, having none of
their own (the i18n plugin's fallback), are left out of its index: they are found in
the default language's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

INDEX = Path("search") / "search_index.json"
# The script Material writes into every page, whose JSON names the site's root, as
# Jinja's `tojson` writes it.
CONFIG = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)
# What `tojson` escapes so that the JSON cannot end its script.
HTML_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "'": "\\u0027"}


def with_base_in(html: str, code: str) -> str:
    """A page of language `code`'s build with its search rooted at its language's
    folder: `base` ("..", the site's root seen from zh/index.html) made "../zh/", a
    folder (Material resolves the index's address and each result's against it)."""
    def rebased(match: re.Match) -> str:
        config = json.loads(match.group(2))
        base = (config.get("base") or ".").rstrip("/")
        config["base"] = f"{code}/" if base == "." else f"{base}/{code}/"
        said = json.dumps(config)
        for character, escaped in HTML_SAFE.items():
            said = said.replace(character, escaped)
        return match.group(1) + said + match.group(3)

    return CONFIG.sub(rebased, html, count=1)


def language_of(location: str, codes: list[str]) -> str | None:
    """The language of an index entry's page, by its folder ("zh/problems/...": "zh");
    None for the default language's."""
    first = location.split("/", 1)[0]
    return first if first in codes and "/" in location else None


def split(site: Path, codes: list[str]) -> None:
    """Give each language of `codes` its own index, and the default language the root's.

    Called after each language's build and once more at the end. A build of one
    language (the i18n plugin builds each inside the default one's) leaves its pages
    alone in the root's index: they become that language's own. The end leaves the
    plugin's index of every language: the root keeps the default language's pages
    (a language whose build wrote no index of its own takes its pages from it too).
    """
    root = site / INDEX
    if not root.is_file():
        return
    index = json.loads(root.read_text(encoding="utf-8"))
    by_language: dict[str | None, list[dict]] = {}
    for entry in index["docs"]:
        by_language.setdefault(language_of(entry["location"], codes), []).append(entry)
    own = by_language.pop(None, [])
    for code, entries in by_language.items():
        path = site / code / INDEX
        if own and path.is_file():
            continue  # written from its own build, which this index may have cut
        docs = [{**entry, "location": entry["location"].removeprefix(f"{code}/")}
                for entry in entries]
        write(path, {**index, "docs": docs})
    if own or not by_language:
        write(root, {**index, "docs": own})


def write(path: Path, index: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # As Material writes it: compact, each character as it is.
    path.write_text(json.dumps(index, separators=(",", ":"), ensure_ascii=False),
                    encoding="utf-8")
