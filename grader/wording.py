"""Numbers and nouns in messages, so that they read as English: "1 token", "the
logits are"."""

from __future__ import annotations

# The verbs the grader's messages conjugate, singular -> plural.
_PLURAL_OF = {"is": "are", "has": "have", "differs": "differ", "holds": "hold"}


def count(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and its noun, singular for exactly one: count(1, "token") is "1 token"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


class Plural(str):
    """A described value that takes a plural verb, said so where it is named
    (Plural("the scaled logits")): its words are not read to find out."""


def agree(what: str, verb: str) -> str:
    """`what` and a present-tense verb given in the singular, made to agree with it:
    agree(Plural("the logits"), "is") is "the logits are"."""
    return f"{what} {_PLURAL_OF[verb] if isinstance(what, Plural) else verb}"


def one_of(names: list[str]) -> str:
    """Names offered as alternatives: "a or b", "a, b or c"."""
    return " or ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} or {names[-1]}"
