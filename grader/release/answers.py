"""What a copy for a graded class leaves out: the hints that give the answer away.

A problem's last hint is its answer in a line (registry.toml: "from a nudge to the
answer"), and a named mistake's fix says what the right code does. Both help a
learner practising alone; in a class whose grade counts, an instructor may hand
out a copy without them (`gpt-kata release --no-answer-hints`): every hint but
the last, no mistake's fix (the mistake is still named), and neither in the
copy's translations either.
"""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

HEADER = ("# Every problem, in the order a learner meets them. This copy was written for a\n"
          "# graded class: each problem's last hint, the one that gives the answer, is left\n"
          "# out.\n")


def toml_value(value: Any) -> str:
    """A TOML value of the registry's kinds: a JSON string is a TOML basic string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[\n" + "".join(f"    {toml_value(v)},\n" for v in value) + "]"
    raise TypeError(f"the registry holds no {type(value).__name__}")


def registry_without_answers(text: str) -> tuple[bytes, set[str]]:
    """The registry with every problem's last hint left out, and the hints left out."""
    registry = tomllib.loads(text)
    left_out: set[str] = set()
    tables = []
    for entry in registry["problem"]:
        entry = dict(entry)
        hints = list(entry.get("hints", [entry["hint"]] if "hint" in entry else []))
        entry.pop("hint", None)
        if hints:
            left_out.add(hints[-1])
            entry["hints"] = hints[:-1]
        tables.append("[[problem]]\n" + "".join(
            f"{key} = {toml_value(value)}\n" for key, value in entry.items()))
    written = HEADER + "last_hint_is_the_answer = false\n\n" + "\n".join(tables)
    assert tomllib.loads(written)["problem"][0]["slug"] == registry["problem"][0]["slug"]
    return written.encode("utf-8"), left_out


def cases_without_fixes(cases: dict[str, Any]) -> set[str]:
    """Blank every stored mistake's fix in `cases` (the practice cases); the fixes."""
    fixes: set[str] = set()
    for problem in cases["problems"].values():
        for part in problem["parts"]:
            for case in [*part["cases"].values(), *part["examples"].values(),
                         *part.get("refusals", {}).values()]:
                for mistake in case.get("mistakes", []):
                    if mistake.get("hint"):
                        fixes.add(mistake["hint"])
                        mistake["hint"] = ""
    return fixes


def every_fix() -> set[str]:
    """Every known mistake's fix, of every problem, practised in the copy or not: the
    translations hold them all."""
    from grader.maintainer.catalogs import mistake_texts

    return {text for text, where in mistake_texts() if where.endswith(", fix")}


# A fix the learner's runtime holds in its code (a mistake judged from calls, not from
# stored answers), on a line of its own: NAME_FIX = "..."
FIX_LINE = re.compile(rb'^(\w+_FIX) = "[^"\n]*"(  # noqa: E501)?$', re.MULTILINE)


def without_fixes(source: bytes) -> bytes:
    """A runtime module's source with each fix it holds blanked, for a graded class's
    copy; the module still runs, naming the mistake without its fix."""
    return FIX_LINE.sub(rb'\1 = ""', source)


# The instructor's side, which the copy does not hold: its words are left out of the
# copy's catalogs too (gradescope's help names the instructor's seed variable). The
# practice grader under grader/release/practice/ is the copy's own, and keeps its words.
INSTRUCTORS_CODE = ("grader/classroom/", "grader/release/", "grader/maintainer/")
COPYS_OWN_CODE = "grader/release/practice/"


def instructors_texts(catalog: bytes) -> set[str]:
    """The msgids of a catalog that only the instructor's side says: a text of the
    grader's code (its entry's comment names grader/) every `tr()` or `marked()` of
    which is in INSTRUCTORS_CODE. Read from the code itself, not from the comment,
    which names at most three places, all on one line: "pass" is said by the
    Gradescope page and by the copy's `list` alike."""
    import polib

    said_by = places_of_texts()
    return {e.msgid for e in polib.pofile(catalog.decode("utf-8"), wrapwidth=0)
            if e.msgid in said_by and e.comment.startswith("grader/") and all(
                place.startswith(INSTRUCTORS_CODE) and not place.startswith(COPYS_OWN_CODE)
                for place in said_by[e.msgid])}


@cache
def places_of_texts() -> dict[str, list[str]]:
    """Each text of a `tr()` or `marked()` in grader/, with every place that says it."""
    from grader.maintainer.catalogs import message_texts

    places: dict[str, list[str]] = {}
    for text, where in message_texts():
        places.setdefault(text, []).append(where)
    return places


def catalog_without(catalog: bytes, texts: set[str]) -> bytes:
    """A gettext catalog without the entries of `texts` (English msgids)."""
    import polib

    po = polib.pofile(catalog.decode("utf-8"), wrapwidth=0)
    for entry in [e for e in po if e.msgid in texts]:
        po.remove(entry)
    return po.__unicode__().encode("utf-8")
