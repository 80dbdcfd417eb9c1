"""The code is ruff-clean and the documentation site builds strictly: part of the
static tier, so that `python -m pytest` (the README's one test command) and each
commit's `-m check` catch a lint error, a broken link or anchor, or a page left out
of the navigation, as CI does."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


def test_the_code_is_ruff_clean() -> None:
    ruff = shutil.which("ruff") or pytest.skip("ruff is not installed (the dev extra has it)")
    done = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]


# A page written in English alone, added to a copy of the site's pages: every page of
# the site has its Chinese, and the Chinese site must still show such a page in English.
ENGLISH_ONLY = "english-only.md"


def with_an_english_only_page(docs: Path) -> Path:
    """A copy of docs/pages under `docs`, with a page that has no Chinese twin, and a
    configuration that is docs/mkdocs.yml building it (MkDocs' `INHERIT`). The copy
    keeps the pictures already drawn (and their times), so the build draws none again."""
    shutil.copytree(ROOT / "docs" / "pages", docs / "pages")
    (docs / "pages" / ENGLISH_ONLY).write_text(
        "# Only in English\n\nA page with no Chinese beside it.\n", encoding="utf-8")
    config = docs / "mkdocs.yml"
    # JSON strings are YAML's; the hook is the repository's, the pages the copy's.
    config.write_text(
        f"INHERIT: {json.dumps((ROOT / 'docs' / 'mkdocs.yml').as_posix())}\n"
        "docs_dir: pages\n"
        f"hooks:\n  - {json.dumps((ROOT / 'docs' / 'site_gen' / 'hooks.py').as_posix())}\n"
        f"not_in_nav: {json.dumps('/' + ENGLISH_ONLY)}\n", encoding="utf-8")
    return config


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="MkDocs is not installed (the dev extra has it)")
    # Run from the copy's parent: mkdocs.yml's snippets read docs/pages from there.
    config = with_an_english_only_page(tmp_path / "docs")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
         "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-5000:]
    assert (tmp_path / "site" / "index.html").is_file()
    # and in Chinese, under zh/: its home page and every statement's
    zh = tmp_path / "site" / "zh"
    assert '<html lang="zh"' in (zh / "index.html").read_text(encoding="utf-8")
    statements = sorted((zh / "problems").glob("[0-9][0-9]-*/index.html"))
    assert len(statements) == len(list((ROOT / "problems").glob("[0-9][0-9]-*/README.zh.md")))
    assert "题" in statements[0].read_text(encoding="utf-8")
    # Each hand-drawn picture a Chinese page shows is its Chinese twin, under zh/.
    shown = 0
    for page in zh.rglob("*.html"):
        for src in re.findall(r'<img[^>]* src="([^"]+\.svg)"', page.read_text(encoding="utf-8")):
            picture = (page.parent / src).resolve()
            assert picture.is_relative_to(zh.resolve()), f"{page}: {src} is the English one"
            assert re.search(r"[\u4e00-\u9fff]", picture.read_text(encoding="utf-8")), picture
            shown += 1
    assert shown >= 3, "the Chinese site shows none of the hand-drawn pictures"
    # A Chinese heading's id keeps its Chinese, as GitHub's does: a reader's link to a
    # section says which one (the default slug made every one of them _1, _2...).
    generate = (zh / "problems" / "06-generate" / "index.html").read_text(encoding="utf-8")
    assert 'id="常见错误"' in generate
    ids = [i for page in zh.rglob("*.html")
           for i in re.findall(r'<h[1-6][^>]* id="([^"]*)"', page.read_text(encoding="utf-8"))]
    assert ids and not [i for i in ids if re.fullmatch(r"_\d+", i)]
    # A heading's link is titled in Chinese on a Chinese page, and its footer's credit
    # is Chinese (Material writes it in English whatever the language).
    loop = (zh / "learners" / "loop.html").read_text(encoding="utf-8")
    assert 'class="headerlink"' in loop and "Permanent link" not in loop
    for page in (zh / "learners" / "loop.html", zh / "404.html"):
        footer = page.read_text(encoding="utf-8").split('class="md-footer')[-1]
        assert "本站由" in footer and "Made with" not in footer, page
    english_footer = (tmp_path / "site" / "learners" / "loop.html").read_text(encoding="utf-8")
    assert "Made with" in english_footer.split('class="md-footer')[-1]
    # A page with no Chinese, shown in English, says so on the Chinese site only.
    note = "本页暂无中文版"
    english_only = ENGLISH_ONLY.replace(".md", ".html")
    shown = (zh / english_only).read_text(encoding="utf-8")
    assert note in shown and "Only in English" in shown
    assert note not in (zh / "learners" / "loop.html").read_text(encoding="utf-8")
    assert note not in (tmp_path / "site" / english_only).read_text(encoding="utf-8")
    # The pages written in Chinese are the Chinese site's, in its navigation.
    pages = ROOT / "docs" / "pages"
    for page in sorted(p for p in pages.rglob("*.zh.md")
                       if p.relative_to(pages).parts[0] != "problems"):
        built = zh / page.relative_to(pages).with_name(page.name.replace(".zh.md", ".html"))
        html = built.read_text(encoding="utf-8")
        assert '<html lang="zh"' in html and note not in html, built
        href = built.relative_to(zh).as_posix()
        assert f'href="{href}"' in (zh / "index.html").read_text(
            encoding="utf-8") or href == "index.html", (
            f"{built} is not in the Chinese site's navigation")
    # The trace's report on the Chinese pictures page is the Chinese run's.
    chinese_run = "gpt-kata --lang zh trace"
    assert chinese_run in (zh / "learners" / "pictures.html").read_text(encoding="utf-8")
    assert chinese_run not in (tmp_path / "site" / "learners" / "pictures.html").read_text(
        encoding="utf-8")
    # Where matplotlib has a font that holds Chinese, the drawn pictures are Chinese too.
    from grader.locale.fonts import cjk_font

    if cjk_font():
        for name in ("attention-mask.png", "sampling-filters.png", "trace-crop-first.png",
                     "loss-curve.png"):
            english = (tmp_path / "site" / "figures" / name).read_bytes()
            assert (zh / "figures" / name).read_bytes() != english, name
    searched_by_language(tmp_path / "site")
    each_language_has_its_404(tmp_path / "site")
    the_sitemap_names_no_broken_address(tmp_path / "site")


def searched_by_language(site: Path) -> None:
    """Each language's pages search an index of their own language's pages: the
    English site's holds no Chinese page, the Chinese site's (under zh/, where its
    pages' `base` points) every Chinese page and none it shows in English."""
    def index(folder: Path) -> set[str]:
        found = json.loads((folder / "search" / "search_index.json").read_text("utf-8"))
        return {entry["location"].split("#")[0] for entry in found["docs"]}

    english, chinese = index(site), index(site / "zh")
    assert "problems/34-grouped-query-attention/index.html" in english
    assert not [page for page in english if page.startswith("zh/")]
    assert "problems/34-grouped-query-attention/index.html" in chinese
    for page in chinese:
        text = (site / "zh" / page).read_text(encoding="utf-8")
        assert '<html lang="zh"' in text and "本页暂无中文版" not in text, page
    assert ENGLISH_ONLY.replace(".md", ".html") not in chinese
    assert "learners/loop.html" in chinese
    assert "instructors/index.html" in chinese
    for page, base in (("zh/index.html", "../zh/"), ("zh/problems/index.html", "../../zh/"),
                       ("index.html", ".")):
        config = re.search(r'<script id="__config" type="application/json">(.*?)</script>',
                           (site / page).read_text(encoding="utf-8"), re.S)
        assert config and json.loads(config.group(1))["base"] == base, page
    chinese_words_are_words_of_the_index(site / "zh" / "search" / "search_index.json")


# Words a Chinese reader of the kata searches for, each written on many Chinese pages.
CHINESE_WORDS = ("注意力", "温度", "采样", "缓存", "训练", "词表")


def chinese_words_are_words_of_the_index(path: Path) -> None:
    """Wherever a section of the Chinese site writes a word, inside a phrase too, the
    word is a term of the index as the search splits it (by the index's separator), or
    the beginning of one, which the search's trailing wildcard finds. Chinese has no
    spaces: Material's search cuts it into words with jieba (the dev extra installs it)
    and puts a zero-width space between them, which the separator splits at."""
    index = json.loads(path.read_text(encoding="utf-8"))
    separator = re.compile(index["config"]["separator"])
    unfound = []
    for entry in index["docs"]:
        said = re.sub(r"<[^>]+>", " ", f"{entry['title']} {entry['text']}")
        terms = separator.split(said)
        unfound += [(word, entry["location"]) for word in CHINESE_WORDS
                    if word in said.replace("\u200b", "")
                    and not any(term.startswith(word) for term in terms)]
    assert not unfound, (
        f"{len(unfound)} sections write a word the Chinese site's search cannot find there "
        "(jieba, which the dev extra installs, cuts the words; the search's separator in "
        f"docs/mkdocs.yml must split at the zero-width spaces it puts): {unfound[:5]}")


def each_language_has_its_404(site: Path) -> None:
    """The root's 404.html is the English site's, zh/404.html the Chinese site's: each in
    its language, searching its language's index, its language menu leading to each
    language's home page (each language's build writes 404.html into the root, and the
    Chinese one, written last, once stood there with the menu of problem 35's page)."""
    for page, language, base in (("404.html", "en", "/"), ("zh/404.html", "zh", "/zh/")):
        html = (site / page).read_text(encoding="utf-8")
        assert f'<html lang="{language}"' in html, page
        config = re.search(r'<script id="__config" type="application/json">(.*?)</script>',
                           html, re.S)
        assert config and json.loads(config.group(1))["base"] == base, page
        menu = dict((lang, href) for href, lang in re.findall(
            r'<a href="([^"]*)" hreflang="([^"]+)" class="md-select__link">', html))
        assert menu == {"en": "/index.html", "zh": "/zh/index.html"}, (page, menu)
    assert "搜索" not in (site / "404.html").read_text(encoding="utf-8")
    # Its heading too, which Material writes in English on every language's page.
    assert "<h1>404 - Not found</h1>" in (site / "404.html").read_text(encoding="utf-8")
    chinese = (site / "zh" / "404.html").read_text(encoding="utf-8")
    assert "<h1>404 - 页面不存在</h1>" in chinese and "Not found" not in chinese


def the_sitemap_names_no_broken_address(site: Path) -> None:
    """With no `site_url` (the project has no published address), a page has no address
    for the sitemap, which then names none, as MkDocs' own template does, rather than
    `Noneindex.html`."""
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    locations = re.findall(r"<loc>([^<]*)</loc>", sitemap)
    assert not [loc for loc in locations if not loc.startswith(("http://", "https://"))], \
        locations[:3]
    assert "None" not in sitemap
