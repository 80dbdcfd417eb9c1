"""The kata in its learner's language: which one is in use, and its catalogs.

English is the kata's own language: its texts are written in English in the code,
the registry and the mistakes files, and those English texts are the keys of each
other language's catalogs, gettext's way (grader/locale/<lang>/*.po; polib reads
them). A text with no translation is shown in English, so a missing entry is never
an error for a learner; tests/test_chinese.py keeps every catalog whole.

The language is, first, `gpt-kata --lang`, which sets GPT_KATA_LANG so that the
processes a command starts speak it too; then GPT_KATA_LANG; then the locale
(LC_ALL, LC_MESSAGES, LANG, as gettext reads them); then English. Reports that
machines read (JSON, JUnit, Gradescope's ids) keep language-free ids whatever the
language.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from typing import Any

ENGLISH = "en"
# The languages the kata speaks, by the code `--lang` takes, and what each is called
# in its own words.
LANGUAGES = {"en": "English", "zh": "中文"}
SETTING = "GPT_KATA_LANG"
CATALOGS = Path(__file__).parent
# A language for a while in this thread only, over all the rest (`speaking`): a
# picture labelled in English where no font draws the learner's language.
SPOKEN: ContextVar[str | None] = ContextVar("SPOKEN", default=None)


def language() -> str:
    """The code of the language in use: "en" or "zh"."""
    if (spoken := SPOKEN.get()) is not None:
        return spoken
    chosen = os.environ.get(SETTING, "").strip()
    if chosen:
        return code_of(chosen) or ENGLISH
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable, "")
        if value:  # the first one set decides, as gettext reads them
            return code_of(value) or ENGLISH
    return code_of(system_locale()) or ENGLISH


@cache
def system_locale() -> str:
    """The user's locale where no variable names one: Windows sets none of LANG and
    the rest, and keeps its own ("zh-CN"); "" elsewhere, or where it cannot be read."""
    if sys.platform != "win32":
        return ""
    try:
        import ctypes

        name = ctypes.create_unicode_buffer(85)  # LOCALE_NAME_MAX_LENGTH
        if ctypes.windll.kernel32.GetUserDefaultLocaleName(name, 85):  # type: ignore[attr-defined]
            return name.value
    except (AttributeError, OSError):
        pass
    return ""


def code_of(name: str) -> str | None:
    """The kata's code for a language or locale name ("zh", "zh_CN.UTF-8", "en_US"),
    or None for one it does not speak ("C" and "POSIX" are English)."""
    base = name.strip().lower().replace("-", "_").split(".")[0].split("_")[0]
    if base in ("c", "posix"):
        return ENGLISH
    return base if base in LANGUAGES else None


def use(code: str) -> None:
    """Speak `code` in this process and in every process it starts."""
    os.environ[SETTING] = code


@contextmanager
def speaking(code: str) -> Iterator[None]:
    """Speak `code` in this thread for the while, and not in the processes it starts:
    unlike `use`, the environment is left alone."""
    token = SPOKEN.set(code)
    try:
        yield
    finally:
        SPOKEN.reset(token)


def tr(text: str, /, **fields: Any) -> str:
    """`text` in the language in use, its `{fields}` filled in. `text` is the English,
    written in the code as a literal: tests find every call by it."""
    said = catalog(language()).get(text) or text
    return said.format(**fields) if fields else said


def marked(text: str, /) -> str:
    """`text` as it is, marked for the catalogs: a name given once, when a module loads
    (before the language is known), and translated where it is shown, by
    `translated` (gettext's N_)."""
    return text


def translated(text: str) -> str:
    """A text of the kata's data (a title, a hint, a mistake's name or fix) in the
    language in use, as it is where no translation exists."""
    return (catalog(language()).get(text) or text) if text else text


@cache
def catalog(code: str) -> dict[str, str]:
    """Every English text of `code`'s catalogs with its translation (none for English)."""
    if code == ENGLISH:
        return {}
    import polib

    entries: dict[str, str] = {}
    try:
        for path in sorted((CATALOGS / code).glob("*.po")):
            for entry in polib.pofile(str(path)):
                if entry.msgstr and not entry.obsolete and "fuzzy" not in entry.flags:
                    entries[entry.msgid] = entry.msgstr
    except OSError:  # a process that may no longer read the grader's files: English
        return {}
    return entries


def localised(path: Path) -> Path:
    """`path` (a statement's README.md, say) in the language in use where that file
    exists beside it (README.zh.md), else `path` itself."""
    code = language()
    if code != ENGLISH:
        candidate = path.with_name(f"{path.stem}.{code}{path.suffix}")
        if candidate.is_file():
            return candidate
    return path
