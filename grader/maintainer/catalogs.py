"""Every English text a learner reads, and the catalogs that translate them.

`python -m grader.maintainer.catalogs zh` brings grader/locale/zh/*.po up to date,
as gettext's msgmerge would: each English text the kata has gets an entry (with
where it comes from), a translation already made is kept, and an entry whose
English is gone is dropped. Then a translator fills in what is empty;
tests/test_chinese.py fails while anything is.

The texts, by catalog:
- problems.po: each track's name, each problem's title and hints (registry.toml);
- checks.po: each check's title (its test's docstring, in the check modules);
- mistakes.po: each known mistake's name and fix (the check modules);
- messages.po: each `tr("...")` and `marked("...")` literal in grader/;
- pictures.po: each label of the site's pictures: of the hand-drawn ones
  (docs/pages/pictures/), from which the site's build writes their Chinese twins
  (translated_picture), and each `tr("...")` literal of the code that draws the
  others (docs/site_gen/).
"""

from __future__ import annotations

import ast
import html
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from grader.grading.contracts.declaring import load_check_module
from grader.locale import CATALOGS
from grader.paths import PACKAGE
from grader.registry import problems

Source = tuple[str, str]  # an English text, and where it comes from


def problem_texts() -> Iterator[Source]:
    for track in dict.fromkeys(problem.track for problem in problems()):
        yield track, "registry.toml: a track"
    for problem in problems():
        yield problem.title, f"registry.toml: {problem.slug}, title"
        for i, hint in enumerate(problem.hints, start=1):
            yield hint, f"registry.toml: {problem.slug}, hint {i}"


def mistake_texts() -> Iterator[Source]:
    from grader.grading.values.failures import Mistake

    for problem in problems():
        module = load_check_module(problem)
        for mistake in mistakes_in(module, Mistake):
            where = f"{mistake.named(problem.slug).id}"
            yield mistake.name, f"{where}, name"
            if mistake.hint:
                yield mistake.hint, f"{where}, fix"


def mistakes_in(module: object, kind: type) -> list:
    """The mistakes a check module holds: its contract's, and any other, alone or in
    a list (tests/test_mistake_ids.py holds each to a well-formed id)."""
    found = list(getattr(getattr(module, "CONTRACT", None), "mistakes", ()))
    for value in vars(module).values():
        if isinstance(value, kind):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(v for v in value if isinstance(v, kind))
    return list({id(m): m for m in found}.values())


def check_texts() -> Iterator[Source]:
    """Each check's title: the first line of its test's docstring, as reports name it
    (grader/grading/engine/plugin.py's test_name)."""
    for problem in problems():
        module = load_check_module(problem)
        for name, value in vars(module).items():
            doc = (getattr(value, "__doc__", None) or "").strip().splitlines()
            if name.startswith("test") and callable(value) and doc:
                yield doc[0].rstrip("."), f"{problem.slug}: {name}"


def message_texts(root: Path = PACKAGE) -> Iterator[Source]:
    """Each `tr("...")` or `marked("...")` whose first argument is a string literal, in
    grader/."""
    for path in sorted(root.rglob("*.py")):
        if "examples" in path.relative_to(root).parts:
            continue  # learner-style submissions (each problem's examples/), not the grader's
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("tr", "marked") and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                yield node.args[0].value, f"{path.relative_to(root.parent)}:{node.lineno}"


# The site's pictures drawn by hand, in English: a picture's twin in another language,
# NAME.<code>.svg beside it, is written by the site's build (docs/site_gen/figures.py)
# and never kept in git.
PICTURES = PACKAGE.parent / "docs" / "pages" / "pictures"
# A picture's texts: its title, and each label. A label of several lines is one text,
# its lines (each a <tspan>) joined by "\n", so that a translation breaks its own lines;
# one marked translate="no" (code, as `model(context)`) is the same in every language.
LABEL = re.compile(r"<(title|text)\b([^>]*)>(.*?)</\1>", re.S)
LINE = re.compile(r"<tspan\b([^>]*)>(.*?)</tspan>", re.S)
DY = re.compile(r'\sdy="[^"]*"')


def picture_labels(svg: str) -> Iterator[str]:
    """The texts of a hand-drawn picture a translation changes, in order."""
    for match in LABEL.finditer(svg):
        tag, attributes, content = match.groups()
        if 'translate="no"' in attributes:
            continue
        lines = [line for _, line in LINE.findall(content)] or [content]
        label = "\n".join(html.unescape(line) for line in lines)
        if re.search(r"[A-Za-z]", label):  # "+" and the like are in no language
            yield label


def translated_picture(svg: str, translations: dict[str, str], code: str) -> str:
    """A hand-drawn picture with each label in `translations` replaced by its
    translation, line for line: a label of one line stays one line, and one of several
    takes as many lines as its translation has, spaced as the English ones are."""
    def replace(match: re.Match) -> str:
        tag, attributes, content = match.groups()
        lines = LINE.findall(content)
        english = "\n".join(html.unescape(line) for _, line in lines or [("", content)])
        said = translations.get(english) if 'translate="no"' not in attributes else None
        if not said:
            return match.group(0)
        if not lines:
            return f"<{tag}{attributes}>{html.escape(said, quote=False)}</{tag}>"
        first = DY.sub("", lines[0][0])
        later = lines[1][0] if len(lines) > 1 else first
        spans = [f"<tspan{first if i == 0 else later}>{html.escape(line, quote=False)}</tspan>"
                 for i, line in enumerate(said.split("\n"))]
        return f"<{tag}{attributes}>{''.join(spans)}</{tag}>"

    # The language named, so that a browser draws Chinese with Chinese glyphs.
    return re.sub(r"<svg\b", f'<svg xml:lang="{code}"', LABEL.sub(replace, svg), count=1)


def picture_texts(folder: Path = PICTURES) -> Iterator[Source]:
    sources = sorted(p for p in folder.glob("*.svg") if p.name.count(".") == 1)
    if not sources:  # an installed kata has no site: its catalog must not be emptied
        raise FileNotFoundError(f"no pictures in {folder}: run this in the repository")
    for path in sources:
        for label in picture_labels(path.read_text(encoding="utf-8")):
            yield label, f"docs/pages/pictures/{path.name}"
    yield from message_texts(folder.parents[1] / "site_gen")


CATALOG_TEXTS = {"problems": problem_texts, "checks": check_texts,
                 "mistakes": mistake_texts, "messages": message_texts,
                 "pictures": picture_texts}


def texts(name: str) -> dict[str, list[str]]:
    """A catalog's English texts, in first-seen order, each with where it comes from."""
    found: dict[str, list[str]] = {}
    for text, where in CATALOG_TEXTS[name]():
        if text:
            found.setdefault(text, []).append(where)
    return found


def update(code: str) -> dict[str, int]:
    """Bring `code`'s catalogs up to date; per catalog, how many entries lack a
    translation."""
    import polib

    untranslated = {}
    for name in CATALOG_TEXTS:
        path = CATALOGS / code / f"{name}.po"
        old = {e.msgid: e.msgstr for e in polib.pofile(str(path))} if path.exists() else {}
        po = polib.POFile(wrapwidth=0)
        po.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": code}
        for text, where in texts(name).items():
            po.append(polib.POEntry(msgid=text, msgstr=old.get(text, ""),
                                    comment="; ".join(where[:3])))
        path.parent.mkdir(parents=True, exist_ok=True)
        po.save(str(path))
        untranslated[name] = sum(1 for e in po if not e.msgstr)
    return untranslated


if __name__ == "__main__":
    for catalog, missing in update(sys.argv[1] if len(sys.argv) > 1 else "zh").items():
        print(f"{catalog}: {missing} without a translation")
