"""The models' refusals (grader/model/config.py) recognised in a message, in any
language the kata speaks: a learners' copy stores its answers' errors in the language
it was written in, and its learner's model says them in theirs, the same refusal
either way. Problem 15's diagnosis and the copy's judge read them here."""

from __future__ import annotations

import re
from functools import cache

from grader.locale import LANGUAGES, catalog
from grader.model.config import NO_TOKENS, NOT_TOKEN_IDS, TOO_LONG


def says_too_long(message: str) -> bool:
    """Whether `message` holds `too_long`'s words, in any language the kata speaks."""
    found = refusal_in(message)
    return found is not None and found[0] == TOO_LONG


def refusal_in(message: str) -> tuple[str, dict[str, str]] | None:
    """The models' refusal `message` holds, in any language the kata speaks: its English
    text and what fills its fields; None for any other message."""
    for template in (TOO_LONG, NOT_TOKEN_IDS, NO_TOKENS):
        for said in {template, *(catalog(code).get(template, "") for code in LANGUAGES)}:
            found = _pattern(said).search(message) if said else None
            if found:
                return template, found.groupdict()
    return None


@cache
def _pattern(said: str) -> re.Pattern[str]:
    """A refusal's text as a pattern: a number where its count is, any text where its
    other fields are, and a field said twice the same both times. Kept, since every
    failing case of the copy's judge asks again for the same few texts."""
    seen: set[str] = set()

    def field(match: re.Match) -> str:
        name = match.group(1)
        if name in seen:
            return f"(?P={name})"
        seen.add(name)
        return f"(?P<{name}>\\d+)" if name in ("window", "tokens") else f"(?P<{name}>.+)"

    return re.compile(re.sub(r"\\\{(\w+)\\\}", field, re.escape(said)))
