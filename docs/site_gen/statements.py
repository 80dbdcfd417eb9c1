"""The statement pages: every problems/NN-slug/README.md as a page of the site.

Written at each build into docs/pages/problems/ (ignored by git), so that a page
can never say other than its statement. Each page is the statement as it is,
with four changes a site needs:

- a line under the title with the problem's track, points and commands, from the
  registry;
- "problem 06" and the like become links to that problem's page;
- relative links keep working: to another statement, to its page; to a file of
  the problem's folder, to a copy beside the page; to any other file of the
  repository, to its path, written out, since the site holds no source files;
- the pictures of docs/site_gen/figures.py that belong to the problem, before
  its first section.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "problems"
# Where the pages go, inside the site's pages; .gitignore names it.
OUT = "problems"


@dataclass(frozen=True)
class Entry:
    """What a page needs of a registry entry (grader.registry.Problem has these)."""

    number: int
    slug: str
    title: str
    track: str
    points: int
    # In Chinese, from the kata's catalogs (grader/locale/zh/problems.po).
    title_zh: str = ""
    track_zh: str = ""

    @property
    def folder(self) -> str:
        return f"{self.number:02d}-{self.slug}"


def entries() -> list[Entry]:
    """The registry's problems, read through grader.registry."""
    from grader.locale import catalog
    from grader.registry import problems

    zh = catalog("zh")
    return [Entry(p.number, p.slug, p.title, p.track, p.points, zh.get(p.title, p.title),
                  zh.get(p.track, p.track)) for p in problems()]


# The languages of the statements: the README's suffix, and the page's (the i18n
# plugin's "suffix" layout: index.zh.md is index.md in Chinese).
LANGUAGES = {"en": ("README.md", "index.md"), "zh": ("README.zh.md", "index.zh.md")}


def page_path(entry: Entry, language: str = "en") -> str:
    """A statement's page, relative to the pages folder."""
    return f"{OUT}/{entry.folder}/{LANGUAGES[language][1]}"


# A fenced block, or a code span: text that is left as it is.
CODE = re.compile(r"^(```|~~~).*?^\1[^\n]*$|`[^`\n]+`", re.M | re.S)
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
# The blanks between words hold at most one line break: a statement is wrapped anywhere.
BLANK = r"(?:[ \t]+\n?|\n)[ \t]*"
PROBLEM = re.compile(rf"\b([Pp]roblems?){BLANK}(\d{{2}})\b"
                     rf"((?:(?:,|{BLANK}and|{BLANK}or|{BLANK}to){BLANK}\d{{2}}\b)*)")
# "第 06 题", "第 06 和 07 题": problem numbers in the Chinese statements.
PROBLEM_ZH = re.compile(r"第 ?(\d{2})((?:(?: ?[、和或至到] ?)\d{2})*) ?题")


def outside_code(markdown: str, change) -> str:
    """`change` applied to the text between code blocks and spans only."""
    out, last = [], 0
    for match in CODE.finditer(markdown):
        out += [change(markdown[last:match.start()]), match.group(0)]
        last = match.end()
    return "".join([*out, change(markdown[last:])])


def link_problems(text: str, entry: Entry, by_number: dict[int, Entry],
                  language: str = "en") -> str:
    """"problem 06" a link to its page; in "problems 06 and 07", each number. A link
    names the English page: the i18n plugin sends a Chinese page's reader to the
    Chinese one, or to the English where a statement has no Chinese yet."""
    page = LANGUAGES["en"][1]

    def number(n: str, shown: str | None = None) -> str:
        other = by_number.get(int(n))
        if other is None or other == entry:
            return shown or n
        return f"[{shown or n}](../{other.folder}/{page})"

    if language == "zh":
        return PROBLEM_ZH.sub(lambda m: re.sub(r"\d{2}", lambda d: number(d.group(0)),
                                                m.group(0)), text)

    def replace(match: re.Match) -> str:
        word, first, rest = match.groups()
        if not rest:
            return number(first, f"{word} {first}")
        rest = re.sub(r"\d{2}", lambda m: number(m.group(0)), rest)
        return f"{word} {number(first)}{rest}"
    return PROBLEM.sub(replace, text)


def relink(text: str, entry: Entry, folders: set[str], copies: set[Path],
           language: str = "en") -> str:
    """Relative links as the page needs them (see the module's docstring)."""
    def replace(match: re.Match) -> str:
        bang, label, target = match.groups()
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target):
            return match.group(0)  # a web address, or an anchor of this page
        path, _, anchor = target.partition("#")
        anchor = f"#{anchor}" if anchor else ""
        here = (PROBLEMS / entry.folder / path).resolve()
        try:
            parts = here.relative_to(PROBLEMS).parts
        except ValueError:
            parts = ()
        if len(parts) == 2 and parts[0] in folders and parts[1] in ("README.md",
                                                                     "README.zh.md"):
            return f"{bang}[{label}](../{parts[0]}/index.md{anchor})"
        if len(parts) == 2 and parts[0] == entry.folder and here.is_file():
            copies.add(here)
            return f"{bang}[{label}]({parts[1]}{anchor})"
        try:
            shown = here.relative_to(ROOT).as_posix()
        except ValueError:
            shown = path
        return f"{label} (`{shown}`)" if label else f"`{shown}`"
    return LINK.sub(replace, text)


def banner(entry: Entry, total: int, language: str = "en") -> str:
    if language == "zh":
        return (f'!!! abstract "第 {entry.number} 题，共 {total} 题 · {entry.track_zh} · '
                f'{entry.points} 分"\n'
                f"    你的文件是 `problems/{entry.folder}/solution.py`；本页是它的题目说明 "
                f"`problems/{entry.folder}/README.zh.md`。用 `gpt-kata --lang zh grade "
                f"{entry.slug}` 检查答案，用 `gpt-kata --lang zh hint {entry.slug}` 获取提示。\n")
    return (f'!!! abstract "Problem {entry.number} of {total} · {entry.track} · '
            f'{entry.points} points"\n'
            f"    Your file is `problems/{entry.folder}/solution.py`; this page is its "
            f"statement, `problems/{entry.folder}/README.md`. Check your answer with "
            f"`gpt-kata grade {entry.slug}`, ask for a hint with `gpt-kata hint "
            f"{entry.slug}`.\n")


def with_pictures(markdown: str, pictures: list[str]) -> str:
    """The pictures (markdown, one each) before the first `## ` section."""
    if not pictures:
        return markdown
    block = "\n".join(pictures) + "\n\n"
    match = re.search(r"^## ", markdown, re.M)
    at = match.start() if match else len(markdown)
    return markdown[:at] + block + markdown[at:]


def page(entry: Entry, all_entries: list[Entry], pictures: list[str],
         copies: set[Path], language: str = "en") -> str:
    """The page of one statement, in `language`."""
    readme = LANGUAGES[language][0]
    markdown = (PROBLEMS / entry.folder / readme).read_text(encoding="utf-8")
    by_number = {e.number: e for e in all_entries}
    folders = {e.folder for e in all_entries}
    markdown = outside_code(markdown, lambda t: link_problems(
        relink(t, entry, folders, copies, language), entry, by_number, language))
    title, _, body = markdown.partition("\n")
    if not title.startswith("# "):
        title, body = f"# {entry.number:02d} · {entry.title}", markdown
    return (f"{title}\n\n{banner(entry, len(all_entries), language)}\n"
            f"{with_pictures(body, pictures)}")


INDEX_HEADS = {
    "en": ["# Every statement", "",
           "Each page below is a problem's `README.md`, as `problems/` holds it, made into "
           "a page each time the site is built. [The problems](../learners/problems.md) "
           "says how they are numbered and scored.", ""],
    "zh": ["# 全部题目说明", "",
           "下面每一页都是一道题的 `README.zh.md`，即 `problems/` 中的中文题目说明，"
           "每次构建网站时生成。[题目一览](../learners/problems.md)说明了题目如何编号和计分。", ""],
}


def index(all_entries: list[Entry], language: str = "en") -> str:
    """The problems, track by track, each linked to its statement."""
    lines = list(INDEX_HEADS[language])
    track = None
    for e in all_entries:
        if e.track != track:
            track = e.track
            # In Chinese, the English heading's anchor, which other pages link to.
            lines += ["", f"## {track}" if language == "en"
                      else f"## {e.track_zh} {{#{anchor_of(track)}}}", ""]
        title = e.title if language == "en" else e.title_zh
        lines.append(f"{e.number}. [{title}]({e.folder}/index.md) (`{e.slug}`)")
    return "\n".join(lines) + "\n"


def anchor_of(heading: str) -> str:
    """The anchor MkDocs gives a heading: "Make GPT talk back" → "make-gpt-talk-back"."""
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())


def write_if_changed(path: Path, content: bytes) -> None:
    """Write only what changed, so that `mkdocs serve` does not rebuild for ever."""
    if not path.is_file() or path.read_bytes() != content:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Renamed into place: two builds at once never read a page half written.
        hidden = path.with_name(f".{path.name}-{os.getpid()}")
        hidden.write_bytes(content)
        os.replace(hidden, path)


def write(pages: Path, pictures: dict[str, list[str]],
          pictures_by_language: dict[str, dict[str, list[str]]] | None = None
          ) -> list[Entry]:
    """Every statement's page, and the index of them, under pages/problems/; what is
    there and no longer a statement's is removed."""
    all_entries = entries()
    out = pages / OUT
    wanted: set[Path] = set()
    for entry in all_entries:
        copies: set[Path] = set()
        for language in LANGUAGES:
            if not (PROBLEMS / entry.folder / LANGUAGES[language][0]).is_file():
                continue  # the Chinese site shows the English page instead
            target = pages / page_path(entry, language)
            shown = (pictures_by_language or {}).get(language, pictures)
            write_if_changed(target, page(entry, all_entries, shown.get(entry.slug, []),
                                          copies, language).encode("utf-8"))
            wanted.add(target)
        for source in copies:
            copy = target.parent / source.name
            write_if_changed(copy, source.read_bytes())
            wanted.add(copy)
    for language in LANGUAGES:
        target = out / LANGUAGES[language][1]
        write_if_changed(target, index(all_entries, language).encode("utf-8"))
        wanted.add(target)
    # Hidden files are another build's, being written.
    for stale in [p for p in out.rglob("*") if p.is_file() and p not in wanted
                  and not p.name.startswith(".")]:
        stale.unlink(missing_ok=True)
    for folder in sorted((p for p in out.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            shutil.rmtree(folder, ignore_errors=True)
    return all_entries


def nav(all_entries: list[Entry]) -> list:
    """The site's navigation section of the statements, track by track."""
    section: list = [f"{OUT}/index.md"]
    for e in all_entries:
        if not isinstance(section[-1], dict) or e.track not in section[-1]:
            section.append({e.track: []})
        section[-1][e.track].append({f"{e.number:02d} · {e.title}": page_path(e)})
    return section


def nav_translations_zh(all_entries: list[Entry] | None = None) -> dict[str, str]:
    """The navigation's names of the statements in Chinese: each track's, and each
    page's as nav() names it, numbered as its heading ("09 · Top-k filtering" →
    "09 · top-k 过滤")."""
    found: dict[str, str] = {}
    for e in all_entries or entries():
        found[e.track] = e.track_zh
        found[f"{e.number:02d} · {e.title}"] = f"{e.number:02d} · {e.title_zh}"
    return found
