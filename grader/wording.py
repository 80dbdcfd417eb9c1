"""Numbers and nouns in messages, so that they read as English: "1 token", "the
logits are"; and the marks a message may use where the reader's console can show
them."""

from __future__ import annotations

import unicodedata


def tokens(n: int) -> str:
    """"1 token", "3 tokens", in the language in use."""
    from grader.locale import tr

    return tr("{n} token", n=n) if n == 1 else tr("{n} tokens", n=n)


def problems(n: int) -> str:
    """"1 problem", "3 problems", in the language in use."""
    from grader.locale import tr

    return tr("{n} problem", n=n) if n == 1 else tr("{n} problems", n=n)


def learners(n: int) -> str:
    """"1 learner", "3 learners", in the language in use."""
    from grader.locale import tr

    return tr("{n} learner", n=n) if n == 1 else tr("{n} learners", n=n)


def gradebooks(n: int) -> str:
    """"1 gradebook", "3 gradebooks", in the language in use."""
    from grader.locale import tr

    return tr("{n} gradebook", n=n) if n == 1 else tr("{n} gradebooks", n=n)


# Type names said with a vowel though written with a consonant ("an ndarray": en-dee).
_SAID_WITH_A_VOWEL = ("ndarray",)


def article(word: str) -> str:
    """"a" or "an", as English says `word`: "an int", "a list", "a uint8" (you-int),
    "an ndarray". A type's name is a word read as written, so its first letter
    decides, but for the few read letter by letter."""
    vowel = word[:1].lower() in "aeio" or word.startswith(_SAID_WITH_A_VOWEL)
    return "an" if vowel else "a"


def a_kind(kind: str) -> str:
    """A type's name with its article, in the language in use: "an int", "a list"
    (what a message shows where a value is not the kind it should be)."""
    from grader.locale import tr

    if kind == "NoneType":  # what a method answers that reaches no return statement
        return tr("None (is a return statement missing?)")
    return (tr("an {kind}", kind=kind) if article(kind) == "an"
            else tr("a {kind}", kind=kind))


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and its noun, singular for exactly one: count(1, "token") is "1 token"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


class Plural(str):
    """A described value that takes a plural verb, said so where it is named
    (Plural("the scaled logits")): its words are not read to find out."""


def one_of(names: list[str]) -> str:
    """Names offered as alternatives: "a or b", "a, b or c", in the language in use."""
    from grader.locale import tr

    if len(names) < 2:
        return "".join(names)
    return tr("{names} or {last}", names=", ".join(names[:-1]), last=names[-1])


def can_show(out: object, text: str) -> bool:
    """Whether a console (anything with an `encoding`, rich's Console among them) can
    write `text` as it is."""
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def glyph(out: object, fancy: str, plain: str) -> str:
    """`fancy` (a check mark, say) where the console can show it, else `plain`."""
    return fancy if can_show(out, fancy) else plain


# Closing marks a line may not start with, and opening marks it may not end with:
# each stays with the character beside it. Chinese's quotes and ellipsis are of
# ambiguous width, outside its block: named here, as its own brackets are.
_NO_BREAK_BEFORE = frozenset("，。、；：？！）」』》,.;:?!)”’…—·")
_NO_BREAK_AFTER = frozenset("（「『《(“‘")
# A mark that joins the character before it (an accent, a variation selector, a
# zero-width joiner): it takes no column, and no line starts with it.
_JOINING = ("Mn", "Me", "Cf")


def is_wide(char: str) -> bool:
    """Whether a terminal gives `char` two columns (a Chinese character, say)."""
    return unicodedata.east_asian_width(char) in ("W", "F")


def joins(char: str) -> bool:
    """Whether `char` is drawn on the character before it, taking no column."""
    return unicodedata.category(char) in _JOINING


def columns(text: str) -> int:
    """How many columns a terminal gives `text`: an ambiguous-width character (a curly
    quote, an ellipsis) takes one, as rich and most terminals count it."""
    return sum(0 if joins(c) else 2 if is_wide(c) else 1 for c in text)


def may_break(before: str, after: str) -> bool:
    """Whether a line may break between two characters with no space between them:
    beside a wide one, as Chinese is set, but never inside a bracket's marks nor before
    a mark that joins the character before it."""
    return ((is_wide(before) or is_wide(after)) and after not in _NO_BREAK_BEFORE
            and before not in _NO_BREAK_AFTER and not joins(after))


def wrapped(text: str, width: int) -> list[str]:
    """`text`, its white space folded, in lines of at most `width` columns as a terminal
    shows them (a word longer than that on a line of its own). A line breaks at a space,
    or beside a wide character, as Chinese is set (`may_break`): textwrap counts
    characters, and a line of Chinese ran twice the terminal's width."""
    pieces: list[str] = []
    for char in " ".join(text.split()):
        if pieces and " " not in (char, pieces[-1]) and not may_break(pieces[-1][-1], char):
            pieces[-1] += char
        else:
            pieces.append(char)
    lines, line = [], ""
    for piece in pieces:
        if piece == " ":
            line += " " if line else ""
        elif line and columns(line + piece) > width:  # its space counts too
            lines.append(line.rstrip())
            line = piece
        else:
            line += piece
    return [*lines, line.rstrip()] if line.strip() else lines
