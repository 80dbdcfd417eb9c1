"""Numbers and nouns in messages, so that they read as English: "1 token", "the
logits are"."""

from __future__ import annotations

_IRREGULAR = {"is": "are", "has": "have", "was": "were"}


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and its noun, singular for exactly one: count(1, "token") is "1 token"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def is_plural(what: str) -> bool:
    """Whether a described value is plural, by its head noun: the word before "of",
    else the last one ("the last position's logits", not "the gradient of the logits")."""
    head = what.split(" of ", 1)[0].split()[-1] if what.split() else what
    return head.endswith("s") and not head.endswith(("ss", "'s", "us"))


def agree(what: str, verb: str) -> str:
    """`what` and a present-tense verb given in the singular, made to agree with it:
    agree("the logits", "is") is "the logits are"."""
    if is_plural(what):
        verb = _IRREGULAR.get(verb, verb[:-1] if verb.endswith("s") else verb)
    return f"{what} {verb}"


def one_of(names: list[str]) -> str:
    """Names offered as alternatives: "a or b", "a, b or c"."""
    return " or ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} or {names[-1]}"
