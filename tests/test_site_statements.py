"""The statement pages the site's build makes from problems/*/README.md
(docs/site_gen/statements.py): one per problem of the registry, each its
statement with links made to work on the site, and nothing of them kept in git.
Text only: no torch, no MkDocs."""

from __future__ import annotations

import importlib.util
import re
import sys
from functools import partial
from pathlib import Path

import pytest
from site_config import mkdocs_config

ROOT = Path(__file__).resolve().parent.parent
SITE_GEN = ROOT / "docs" / "site_gen"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"site_gen_{name}", SITE_GEN / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


statements = load("statements")


PICTURE = "![a picture](../../pictures/kv-cache.svg)\n"


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pages = tmp_path_factory.mktemp("pages")
    statements.write(pages, {"kv-cache": [PICTURE]})
    return pages


def words(markdown: str) -> list[str]:
    """The statement's words, links undone: what a reader reads either way."""
    markdown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return markdown.split()


def test_every_statement_is_a_page_that_says_what_its_readme_says(written: Path) -> None:
    entries = statements.entries()
    assert len(entries) == len(list((ROOT / "problems").glob("[0-9][0-9]-*/README.md")))
    for entry in entries:
        readme = (ROOT / "problems" / entry.folder / "README.md").read_text(encoding="utf-8")
        page = (written / statements.page_path(entry)).read_text(encoding="utf-8")
        page = page.replace(PICTURE, "")
        title, _, body = page.partition("\n")
        assert title == readme.partition("\n")[0], entry.folder
        # The page adds a banner (and pictures) before the statement's text, and
        # changes no word of it.
        text = words(readme.partition("\n")[2])
        assert words(body)[-len(text):] == text, f"{entry.folder}: the page's text differs"
        assert f"gpt-kata grade {entry.slug}" in body


def test_every_chinese_statement_is_a_page_of_the_chinese_site(written: Path) -> None:
    """problems/NN-slug/README.zh.md becomes index.zh.md beside the English page (the
    i18n plugin's layout), with a banner in Chinese and every word of the statement."""
    for entry in statements.entries():
        readme = (ROOT / "problems" / entry.folder / "README.zh.md").read_text(encoding="utf-8")
        page = (written / statements.page_path(entry, "zh")).read_text(encoding="utf-8")
        page = page.replace(PICTURE, "")
        title, _, body = page.partition("\n")
        assert title == readme.partition("\n")[0], entry.folder
        text = words(readme.partition("\n")[2])
        assert words(body)[-len(text):] == text, f"{entry.folder}: the page's text differs"
        assert f"gpt-kata --lang zh grade {entry.slug}" in body and "题" in body
    index = (written / "problems" / "index.zh.md").read_text(encoding="utf-8")
    assert re.findall(r"\]\(([^)]+)/index\.md\)", index) == [
        e.folder for e in statements.entries()]
    # The track headings keep the English anchors that other pages link to.
    assert "{#make-gpt-talk-back}" in index and "{#build-the-gpt}" in index


def test_the_index_and_the_navigation_list_every_problem_in_order(written: Path) -> None:
    entries = statements.entries()
    index = (written / "problems" / "index.md").read_text(encoding="utf-8")
    assert re.findall(r"\]\(([^)]+)/index\.md\)", index) == [e.folder for e in entries]
    nav = statements.nav(entries)
    pages = [page for track in nav[1:] for items in track.values()
             for item in items for page in item.values()]
    assert pages == [statements.page_path(e) for e in entries]
    assert [next(iter(track)) for track in nav[1:]] == list(dict.fromkeys(
        e.track for e in entries))


def test_a_problems_pictures_come_before_its_first_section(written: Path) -> None:
    page = (written / "problems" / "15-kv-cache" / "index.md").read_text(encoding="utf-8")
    assert page.index("](../../pictures/kv-cache.svg)") < page.index("\n## ")


def test_what_was_a_statement_and_is_no_longer_is_removed(tmp_path: Path) -> None:
    stale = tmp_path / "problems" / "99-gone" / "index.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("# gone\n", encoding="utf-8")
    statements.write(tmp_path, {})
    assert not stale.parent.exists()


def test_problem_numbers_become_links_outside_code() -> None:
    entries = statements.entries()
    by_number = {e.number: e for e in entries}
    kv = by_number[15]
    text = ("As in problem 06. Problems 13 to 16 stop; see `problem 06` and\n"
            "```\nproblem 07\n```\nproblem 15 is this one.")
    got = statements.outside_code(text, lambda t: statements.link_problems(t, kv, by_number))
    assert "[problem 06](../06-generate/index.md)" in got
    assert "Problems [13](../13-eos-stop/index.md) to [16](../16-sampler/index.md)" in got
    assert "`problem 06`" in got and "```\nproblem 07\n```" in got
    assert "problem 15 is this one" in got  # a page does not link to itself
    # A statement's lines are wrapped anywhere, between "problem" and its number too.
    wrapped = statements.link_problems("as in problem\n   06. Problems 01\nto 05 are", kv,
                                       by_number)
    assert "[problem 06](../06-generate/index.md)" in wrapped
    assert "Problems [01](../01-crop-context/index.md)\nto [05](../05-decode/index.md)" \
        in wrapped


def link(text: str, entry, by_number: dict, language: str) -> str:
    return statements.link_problems(text, entry, by_number, language)


def test_a_chinese_statement_links_the_problems_its_english_one_links() -> None:
    """The site links "第 NN 题" only: six Chinese statements wrote "题目 NN", which
    stayed plain text where their English twins link."""
    entries = statements.entries()
    by_number = {e.number: e for e in entries}
    for entry in entries:
        linked = {}
        for language, name in (("en", "README.md"), ("zh", "README.zh.md")):
            text = (ROOT / "problems" / entry.folder / name).read_text(encoding="utf-8")
            made = statements.outside_code(text, partial(
                link, entry=entry, by_number=by_number, language=language))
            linked[language] = set(re.findall(r"\]\(\.\./(\d{2})-", made))
        assert linked["zh"] == linked["en"], (
            f"{entry.folder}: the English statement links problems {sorted(linked['en'])}, "
            f"the Chinese {sorted(linked['zh'])}: write each as 第 NN 题")


def test_relative_links_are_made_to_work_on_the_site(tmp_path: Path, monkeypatch) -> None:
    problems = tmp_path / "problems"
    (problems / "01-one").mkdir(parents=True)
    (problems / "01-one" / "steps.png").write_bytes(b"png")
    monkeypatch.setattr(statements, "PROBLEMS", problems)
    monkeypatch.setattr(statements, "ROOT", tmp_path)
    entry = statements.Entry(1, "one", "One", "a track", 10)
    copies: set[Path] = set()
    got = statements.relink(
        "[the loop](../06-generate/README.md#edge-cases), ![steps](steps.png), "
        "[the play module](../../grader/play.py), [the web](https://example.org/x)",
        entry, {"06-generate", "01-one"}, copies)
    assert "[the loop](../06-generate/index.md#edge-cases)" in got
    assert "![steps](steps.png)" in got and copies == {problems / "01-one" / "steps.png"}
    assert "the play module (`grader/play.py`)" in got
    assert "[the web](https://example.org/x)" in got


def test_git_ignores_what_the_build_writes() -> None:
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for folder in ("docs/pages/problems/", "docs/pages/figures/", "docs/zensical.yml",
                   "docs/pages/pictures/*.zh.svg"):
        assert folder in ignored, f".gitignore does not name {folder}"


def test_the_pictures_each_statement_shows_exist_and_belong_to_problems() -> None:
    figures = load("figures")
    slugs = {e.slug for e in statements.entries()}
    assert set(figures.PROBLEM_PICTURES) <= slugs, set(figures.PROBLEM_PICTURES) - slugs
    named = {name for names in figures.PROBLEM_PICTURES.values() for name in names}
    assert named <= set(figures.PICTURE), named - set(figures.PICTURE)
    pages = ROOT / "docs" / "pages" / "problems" / "01-any"  # where a statement's page is
    for path, _caption in figures.PICTURE.values():
        name = Path(path).name
        drawn = name in figures.DRAWN
        assert drawn or (pages / path).resolve().is_file(), f"{path}: neither drawn nor in git"


def test_the_chinese_site_names_every_statement_and_track_in_chinese() -> None:
    entries = statements.entries()
    names = statements.nav_translations_zh(entries)
    section = statements.nav(entries)
    shown = [name for track in section[1:] for name, items in track.items()]
    shown += [title for track in section[1:] for items in track.values()
              for item in items for title in item]
    assert set(shown) == set(names), "a name of the statements' navigation has no Chinese"
    assert all(re.search(r"[\u4e00-\u9fff]", names[n]) or names[n].endswith("RMSNorm")
               for n in shown), [names[n] for n in shown]
    figures = load("figures")
    assert set(figures.CAPTIONS_ZH) == set(figures.PICTURE)
    caption = statements.with_pictures("## x\n", [figures.markdown("model", "zh")])
    assert figures.CAPTIONS_ZH["model"] in caption


PAGES = ROOT / "docs" / "pages"
HAND_DRAWN = PAGES / "pictures"
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
CJK = re.compile(r"[\u3400-\u9fff]")


def hand_drawn_in(page: Path, markdown: str) -> set[Path]:
    """The hand-drawn pictures a page shows, as files of docs/pages/pictures/."""
    shown = {(page.parent / src).resolve() for src in IMAGE.findall(markdown)}
    return {p for p in shown if p.parent == HAND_DRAWN.resolve()}


def test_every_picture_of_an_english_page_has_a_chinese_twin_its_chinese_page_shows(
        tmp_path: Path) -> None:
    """A page of the Chinese site names the pictures its English page names: the i18n
    plugin shows it each picture's Chinese twin (NAME.zh.svg), which the build writes
    for every hand-drawn picture."""
    figures = load("figures")
    pairs = []
    for page in sorted(PAGES.rglob("*.md")):
        if page.name.endswith(".zh.md") or page.relative_to(PAGES).parts[0] == "problems":
            continue  # the statements' pages are written by the build: below
        english = hand_drawn_in(page, page.read_text(encoding="utf-8"))
        if english:
            twin = page.with_name(f"{page.stem}.zh.md")
            assert twin.is_file(), f"{page.relative_to(PAGES)} shows pictures and has no Chinese"
            pairs.append((page, english, hand_drawn_in(twin, twin.read_text(encoding="utf-8"))))
    statement = PAGES / "problems" / "01-any" / "index.md"
    for slug in figures.PROBLEM_PICTURES:
        pairs.append((slug, hand_drawn_in(statement, "".join(figures.pictures_in("en")[slug])),
                      hand_drawn_in(statement, "".join(figures.pictures_in("zh")[slug]))))
    assert pairs, "no page shows a hand-drawn picture"
    for where, english, chinese in pairs:
        assert english == chinese, f"{where}: English {english}, Chinese {chinese}"

    pages = tmp_path / "pages"
    (pages / "pictures").mkdir(parents=True)
    for source in HAND_DRAWN.glob("*.svg"):
        if source.name.count(".") == 1:
            (pages / "pictures" / source.name).write_bytes(source.read_bytes())
    twins = {p.name for p in figures.write_twins(pages)}
    shown = {p.name for _, english, _ in pairs for p in english}
    assert {name.replace(".svg", ".zh.svg") for name in shown} <= twins, twins


def test_a_chinese_picture_has_chinese_labels_in_a_font_that_draws_them(
        tmp_path: Path) -> None:
    """Every label of a twin is Chinese, but code (marked translate="no" in the
    English, as `model(context)`), and the picture names fonts that hold Chinese."""
    from grader.locale.fonts import CJK_FONTS
    from grader.maintainer.catalogs import LABEL, LINE

    figures = load("figures")
    (tmp_path / "pictures").mkdir()
    for source in HAND_DRAWN.glob("*.svg"):
        if source.name.count(".") == 1:
            (tmp_path / "pictures" / source.name).write_bytes(source.read_bytes())
    twins = figures.write_twins(tmp_path)
    assert twins
    for twin in twins:
        svg = twin.read_text(encoding="utf-8")
        root = re.search(r"<svg\b[^>]*>", svg).group(0)
        assert 'xml:lang="zh"' in root, twin.name
        family = re.search(r'font-family="([^"]*)"', root).group(1)
        assert any(font in family for font in CJK_FONTS), f"{twin.name}: {family}"
        for _tag, attributes, content in LABEL.findall(svg):
            label = " ".join(line for _, line in LINE.findall(content)) or content
            if not re.search(r"[A-Za-z]", label):
                continue
            if 'translate="no"' in attributes:
                # code, not prose left in English
                assert not re.search(r"[A-Za-z]{2,} [A-Za-z]{2,}", label), label
            else:
                assert CJK.search(label), f"{twin.name}: {label!r} is not translated"


def test_the_chinese_site_names_every_page_of_the_navigation_in_chinese() -> None:
    """The Chinese navigation names every page in Chinese, those shown in English too
    (their note says so); a product's name (Gradescope) stays as it is."""
    config = mkdocs_config()
    zh = next(language for plugin in config["plugins"] if isinstance(plugin, dict)
              for language in plugin.get("i18n", {}).get("languages", [])
              if language["locale"] == "zh")
    names = zh["nav_translations"]

    def titles(items: list) -> list[str]:
        found = []
        for item in items:
            if isinstance(item, dict):
                for title, value in item.items():
                    found.append(title)
                    found += titles(value) if isinstance(value, list) else []
        return found

    shown = titles(config["nav"])
    assert shown
    missing = [t for t in shown if t not in names]
    assert not missing, f"no Chinese name in mkdocs.yml's nav_translations: {missing}"
    english = [t for t in shown if not CJK.search(names[t]) and " " in t]
    assert not english, f"named in English on the Chinese site: {english}"
