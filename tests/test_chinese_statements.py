"""The Chinese statements keep step with the English ones.

Each problems/NN-slug/README.zh.md is written for a Chinese reader, not word for
word, but it must teach the same thing with the same code and values: the same
code blocks (the examples a learner runs) but for their comments, which are
Chinese, and `--lang zh` in its commands, the same inline code, the
same numbers in the prose, the same sections, and the glossary's terms
(problems/glossary.zh.toml) wherever the English uses them. The site's own pages
with a Chinese twin (docs/pages/**/NAME.zh.md) keep their English's code and numbers.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from site_config import heading_slug

from grader.registry import problems

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "problems" / "glossary.zh.toml"
# A fenced block, also one indented in a list item.
FENCE = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```[ \t]*$", re.M | re.S)
# A code span, which a statement may break over two lines.
INLINE = re.compile(r"`([^`]+)`")
# A number as prose writes it: 0.3295, 6.3e-05, 1e-3, 40, also against a Chinese
# character (第06题); not the digits of a word such as "float32", nor a slug's.
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?(?:e-?\d+)?(?![A-Za-z0-9_])")
FOLDERS = [p.folder for p in problems()]


def statement(folder: str, language: str) -> str:
    name = "README.md" if language == "en" else f"README.{language}.md"
    return (ROOT / "problems" / folder / name).read_text(encoding="utf-8")


def code_blocks(text: str) -> list[str]:
    return FENCE.findall(text)


def prose(text: str) -> str:
    """The text outside code blocks, with its inline code left out too."""
    return INLINE.sub(" ", FENCE.sub(" ", text))


def inline_code(text: str) -> set[str]:
    return {" ".join(span.split()) for span in INLINE.findall(FENCE.sub(" ", text))}


def numbers(text: str) -> set[str]:
    return set(NUMBER.findall(prose(text)))


def sections(text: str) -> list[str]:
    return [line.split(" ", 1)[0] for line in FENCE.sub("", text).splitlines()
            if line.startswith("#")]


def checked_terms() -> list[dict]:
    with GLOSSARY.open("rb") as f:
        return [t for t in tomllib.load(f)["term"] if t.get("checked")]


def test_the_glossary_is_well_formed() -> None:
    with GLOSSARY.open("rb") as f:
        terms = tomllib.load(f)["term"]
    english = [t["en"] for t in terms]
    assert len(english) == len(set(english)), "a term is listed twice"
    for term in terms:
        assert set(term) <= {"en", "zh", "keep", "note", "checked"}, term
        assert term["zh"].strip(), term
        if term.get("keep"):
            assert term["zh"] == term["en"], f"{term['en']} is kept as it is in English"


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_statement_has_its_chinese(folder: str) -> None:
    path = ROOT / "problems" / folder / "README.zh.md"
    assert path.is_file(), f"problems/{folder}/README.zh.md is missing"
    text = path.read_text(encoding="utf-8")
    assert re.search(r"[\u4e00-\u9fff]", text), f"{path} has no Chinese in it"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_statements_title_is_the_one_list_and_the_site_show(language: str) -> None:
    """The site's navigation and `gpt-kata list` name a problem by its registry title,
    in the catalog's words in Chinese; its page's heading said otherwise for ten."""
    from grader.locale import speaking, translated

    with speaking(language):
        differ = [f"{problem.folder}: {first} (the registry's: {translated(problem.title)})"
                  for problem in problems()
                  if (first := statement(problem.folder, language).splitlines()[0])
                  != f"# {problem.number:02d} · {translated(problem.title)}"]
    assert not differ, differ


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_chinese_statement_has_the_same_code_and_values(folder: str) -> None:
    english, chinese = statement(folder, "en"), statement(folder, "zh")
    # The same code but for its comments, in Chinese there, and the `--lang zh` its
    # commands add, so that the grade a Chinese reader runs speaks Chinese anywhere.
    assert page_code(chinese) == page_code(english), (
        "the code blocks differ: a statement's code is the same in both languages")
    assert not english_comments(chinese), (
        f"comments left in English: {english_comments(chinese)}")
    commands = [line.strip() for block in code_blocks(chinese) for line in block.splitlines()
                if line.strip().startswith("gpt-kata ")]
    assert all(c.startswith("gpt-kata --lang zh ") for c in commands), commands
    assert inline_code(chinese) == inline_code(english), (
        f"inline code only in English: {sorted(inline_code(english) - inline_code(chinese))}; "
        f"only in Chinese: {sorted(inline_code(chinese) - inline_code(english))}")
    assert numbers(chinese) == numbers(english), (
        f"numbers only in English: {sorted(numbers(english) - numbers(chinese))}; "
        f"only in Chinese: {sorted(numbers(chinese) - numbers(english))}")
    assert sections(chinese) == sections(english), "the headings differ in number or level"


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_chinese_statement_uses_the_glossary(folder: str) -> None:
    english, chinese = prose(statement(folder, "en")), prose(statement(folder, "zh"))
    missing = [f"{t['en']} ({t['zh']})" for t in checked_terms()
               if re.search(rf"\b{re.escape(t['en'])}", english, re.I)
               and t["zh"] not in chinese]
    assert not missing, f"the English uses these terms, not the Chinese their glossary's: {missing}"


# The site's own pages with a Chinese twin beside them (NAME.zh.md). The statements'
# pages, which the build writes into docs/pages/problems/, are checked above.
PAGES = ROOT / "docs" / "pages"
TWINS = sorted(p for p in PAGES.rglob("*.zh.md") if p.relative_to(PAGES).parts[0] != "problems")


# A comment of a code block ("  # every problem"): the Chinese page's is Chinese.
COMMENT = re.compile(r"(?:^|[ \t])#[ \t][^\n]*", re.M)


def page_code(text: str) -> list[str]:
    """A page's code blocks, less the `--lang zh` the Chinese commands add, their
    comments, which a Chinese page writes in Chinese, and the `.zh` of a command's
    report it includes in Chinese (`--8<-- "figures/NAME.zh.txt"`)."""
    return [" ".join(COMMENT.sub("", block).replace("--lang zh ", "")
                     .replace('.zh.txt"', '.txt"').split())
            for block in code_blocks(text)]


def english_comments(text: str) -> list[str]:
    """The comments of a page's code blocks with no Chinese and a word of English."""
    return [c.strip() for block in code_blocks(text) for c in COMMENT.findall(block)
            if not re.search(r"[\u4e00-\u9fff]", c) and re.search(r"[A-Za-z]{3,}", c)]


@pytest.mark.parametrize("chinese", TWINS, ids=lambda p: p.relative_to(PAGES).as_posix())
def test_a_chinese_pages_code_comments_are_chinese(chinese: Path) -> None:
    english = english_comments(chinese.read_text(encoding="utf-8"))
    assert not english, f"comments left in English: {english}"


@pytest.mark.parametrize("chinese", TWINS, ids=lambda p: p.relative_to(PAGES).as_posix())
def test_a_chinese_page_keeps_the_code_and_numbers_of_its_english(chinese: Path) -> None:
    # A page changed in English only is caught here, as a statement is above.
    zh = chinese.read_text(encoding="utf-8")
    en = chinese.with_name(chinese.name.replace(".zh.md", ".md")).read_text(encoding="utf-8")
    assert page_code(zh) == page_code(en), "the code blocks differ from the English page's"
    assert numbers(zh) == numbers(en), (
        f"numbers only in English: {sorted(numbers(en) - numbers(zh))}; "
        f"only in Chinese: {sorted(numbers(zh) - numbers(en))}")


# A heading of a page, and the anchor it is given (`## 名单 {#the-roster}`), if any.
HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]*\{#([\w-]+)\})?[ \t]*$", re.M)


def anchors(text: str) -> list[tuple[str, str]]:
    """Each heading's level and anchor: the one it is given, else the toc extension's
    slug of its words, as mkdocs.yml's slugify makes it."""
    return [(level, given or heading_slug(words))
            for level, words, given in HEADING.findall(FENCE.sub("", text))]


@pytest.mark.parametrize("chinese", TWINS, ids=lambda p: p.relative_to(PAGES).as_posix())
def test_a_chinese_page_keeps_the_anchors_of_its_english(chinese: Path) -> None:
    # Pages of both languages link to a section by its English anchor (a Chinese page
    # links to a page the Chinese site may show in English): a Chinese heading gives
    # itself its English's anchor, or a link into it leads to the top of the page.
    en = chinese.with_name(chinese.name.replace(".zh.md", ".md")).read_text(encoding="utf-8")
    assert anchors(chinese.read_text(encoding="utf-8")) == anchors(en), (
        "the headings' levels or anchors differ from the English page's")


def test_the_parity_checks_can_fail() -> None:
    english = "# 01 · A\n\nKeep `k` at 0.5.\n\n## Your task\n\n```python\nx = 1\n```\n"
    drifted = "# 01 · 甲\n\n保留 `j`，取0.25。\n\n```python\nx = 2\n```\n"
    assert code_blocks(drifted) != code_blocks(english)
    assert page_code(drifted) != page_code(english)
    assert english_comments("```\nx = 1  # one more\n```\n") == ["# one more"]
    assert not english_comments("```\nx = 1  # 再加一\n```\n")
    assert inline_code(drifted) != inline_code(english)
    assert numbers(drifted) != numbers(english)
    assert sections(drifted) != sections(english)
    assert anchors("## 你的任务 {#your-task}\n") == anchors("## Your task\n")
    assert anchors("## 你的任务\n") != anchors("## Your task\n")
