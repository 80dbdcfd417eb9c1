"""A deterministic storybook corpus built from a tiny English grammar, and its checker.

The kata trains a small character-level GPT and then asks whether the text it samples looks
like the language it was trained on. Real English cannot answer that question exactly, so the
training text comes from a small context-free grammar instead, and the same grammar, compiled
to a regular expression, decides whether a sampled sentence is well formed.

The grammar is written down once (the word lists and ``GRAMMAR`` below). The generator expands
it at random and the checker is compiled from it, so the two cannot drift apart: every sentence
the generator can write is accepted, and nothing else is.
"""

from __future__ import annotations

import random
import re

# Nouns and adjectives all start with a consonant, so "a" never needs to become "an".
NAMES = ("Tom", "Mia", "Sam", "Lily", "Ben", "Anna", "Max")
CREATURES = (
    "cat", "dog", "bird", "fox", "frog", "bear", "rabbit",
    "mouse", "duck", "pig", "girl", "boy", "king", "queen",
)  # fmt: skip
THINGS = ("ball", "box", "cake", "boat", "hat", "key", "kite", "drum", "cup", "star", "tree")
ADJECTIVES = (
    "big", "small", "red", "blue", "green", "little", "tiny", "brave",
    "shy", "kind", "sleepy", "funny", "soft", "lost", "happy", "sad",
)  # fmt: skip
MOODS = ("happy", "sad", "tired", "scared", "proud", "glad")
TRANSITIVE_VERBS = (
    "saw", "found", "liked", "hugged", "chased", "took", "kept",
    "painted", "wanted", "held", "carried", "hid", "pushed", "followed",
)  # fmt: skip
INTRANSITIVE_VERBS = (
    "ran", "walked", "slept", "smiled", "laughed", "cried", "sang", "danced", "jumped", "waited",
)  # fmt: skip
ADVERBS = ("quickly", "slowly", "happily", "quietly", "loudly", "again")
PLACES = (
    "in the woods", "by the river", "at home", "on the hill",
    "near the pond", "in the garden", "at the park",
)  # fmt: skip
OPENERS = ("one day,", "then", "later,", "at night,", "soon,")
PRONOUNS = ("he", "she", "they")
OBJECT_PRONOUNS = ("him", "her", "them")

# Past tense everywhere (and "felt", never "was", after a pronoun) means no verb agreement.
PUNCTUATION = (",", ".", "!", "?")

Rule = tuple[float, tuple[str, ...]]


def _words(words: tuple[str, ...]) -> list[Rule]:
    """Equal weights, so every word of a list is seen often enough to be learned."""
    return [(1.0, (word,)) for word in words]


# Each symbol maps to weighted alternatives; an item is either another "<symbol>" or a literal
# (a word, a fixed phrase or a punctuation mark). The first word of a sentence is capitalised
# when the sentence is written, so literals here are lowercase except names.
GRAMMAR: dict[str, list[Rule]] = {
    "<opening>": [
        (2, ("once upon a time,", "there was a", "<creature-np>", ".")),
        (2, ("there was a", "<creature-np>", "named", "<name>", ".")),
        (1, ("there was a", "<creature-np>", "<place>", ".")),
    ],
    "<sentence>": [
        (6, ("<subject>", "<predicate>", "<tail>", "<end>")),
        (2, ("<opener>", "<subject>", "<predicate>", "<end>")),
        (1, ("where is", "<np>", "?")),
        (1, ("who", "<tverb>", "<object>", "?")),
        (1, ("what a", "<adj>", "<noun>", "!")),
    ],
    "<subject>": [(3, ("<det>", "<creature-np>")), (2, ("<name>",)), (1, ("<pronoun>",))],
    "<predicate>": [
        (3, ("<tverb>", "<object>")),
        (1, ("<iverb>",)),
        (1, ("<iverb>", "<adverb>")),
    ],
    "<tail>": [(5, ()), (2, ("<place>",)), (2, ("<reason>",))],
    "<reason>": [
        (1, ("because", "<subject>", "felt", "<mood>")),
        (1, (",", "and then", "<predicate>")),
        (1, ("when", "<pronoun>", "<iverb>")),
    ],
    "<np>": [(3, ("the", "<noun-np>")), (1, ("<name>",))],
    "<object>": [(4, ("<det>", "<noun-np>")), (1, ("<name>",)), (1, ("<object-pronoun>",))],
    "<creature-np>": [(1, ("<creature>",)), (1, ("<adj>", "<creature>"))],
    "<noun-np>": [(1, ("<noun>",)), (1, ("<adj>", "<noun>"))],
    "<det>": [(3, ("the",)), (1, ("a",))],
    "<end>": [(4, (".",)), (1, ("!",))],
    "<name>": _words(NAMES),
    "<creature>": _words(CREATURES),
    "<noun>": _words(CREATURES + THINGS),
    "<adj>": _words(ADJECTIVES),
    "<mood>": _words(MOODS),
    "<tverb>": _words(TRANSITIVE_VERBS),
    "<iverb>": _words(INTRANSITIVE_VERBS),
    "<adverb>": _words(ADVERBS),
    "<place>": _words(PLACES),
    "<opener>": _words(OPENERS),
    "<pronoun>": _words(PRONOUNS),
    "<object-pronoun>": _words(OBJECT_PRONOUNS),
}

# A sentence is either a story opening or an ordinary sentence; both may appear anywhere.
SENTENCE_SYMBOLS = ("<opening>", "<sentence>")


def _token(literal: str) -> str:
    """Words carry their own leading space and punctuation carries none, so plain
    concatenation (and plain regex concatenation) gets the spacing right."""
    return literal if literal in PUNCTUATION else " " + literal


def _capitalise(token: str) -> str:
    """Only the first letter changes: ``str.capitalize`` would lowercase names later on."""
    return token[0] + token[1].upper() + token[2:]


def _expand(symbol: str, rng: random.Random, out: list[str]) -> None:
    if symbol not in GRAMMAR:
        out.append(_token(symbol))
        return
    rules = GRAMMAR[symbol]
    (items,) = rng.choices([items for _, items in rules], weights=[w for w, _ in rules])
    for item in items:
        _expand(item, rng, out)


def _sentence(symbol: str, rng: random.Random) -> str:
    tokens: list[str] = []
    _expand(symbol, rng, tokens)
    tokens[0] = _capitalise(tokens[0])
    return "".join(tokens)[1:]  # drop the first word's leading space


def generate_corpus(seed: int = 0, target_bytes: int = 500_000) -> str:
    """One story per line, so the model also learns where stories end.

    Only ``random.Random(seed)`` is consulted (and dicts keep insertion order), so the same
    seed gives byte-identical text on every machine and Python run. Generation stops after the
    first story that brings the text to ``target_bytes``; at least one story is always written.
    """
    rng = random.Random(seed)
    stories: list[str] = []
    size = 0
    while True:
        first = "<opening>" if rng.random() < 0.5 else "<sentence>"
        sentences = [_sentence(first, rng)]
        sentences += [_sentence("<sentence>", rng) for _ in range(rng.randint(1, 5))]
        story = " ".join(sentences) + "\n"
        stories.append(story)
        size += len(story)
        if size >= target_bytes:
            return "".join(stories)


def _regex(item: str, capitalise: bool = False) -> str:
    """Mirror ``_expand``: a symbol becomes an alternation of its rules, a literal its token."""
    if item not in GRAMMAR:
        token = _token(item)
        return re.escape(_capitalise(token) if capitalise else token)
    alternatives = []
    for _, items in GRAMMAR[item]:
        if not items:
            if capitalise:
                raise ValueError(f"{item} may be empty, so it cannot start a sentence")
            alternatives.append("")
            continue
        first = _regex(items[0], capitalise)
        alternatives.append(first + "".join(_regex(rest) for rest in items[1:]))
    return "(?:" + "|".join(alternatives) + ")"


_SENTENCE_RE = re.compile("|".join(_regex(symbol, capitalise=True) for symbol in SENTENCE_SYMBOLS))


def split_sentences(text: str) -> list[str]:
    """Complete sentences only: text after the last ``.``, ``!`` or ``?`` of a line is dropped.

    Sampled text is usually cut off mid-sentence, and a half sentence says nothing about
    whether the model learned the grammar. Exactly one separating space is removed before
    each non-first sentence of a line; any other stray whitespace stays in the sentence so
    that the checker rejects it rather than it being silently repaired here.
    """
    sentences = []
    for line in text.split("\n"):
        for i, match in enumerate(re.finditer(r"[^.!?]*[.!?]", line)):
            sentence = match.group()
            if i > 0 and sentence.startswith(" "):
                sentence = sentence[1:]
            sentences.append(sentence)
    return sentences


def is_well_formed(sentence: str) -> bool:
    """True exactly when the grammar can produce ``sentence`` (spelling, slots, capitals,
    spacing and final punctuation all have to be right)."""
    return _SENTENCE_RE.fullmatch(" " + sentence) is not None


def well_formed_fraction(text: str) -> tuple[int, int]:
    """Counts rather than a ratio, so callers can treat "no complete sentence" explicitly."""
    sentences = split_sentences(text)
    return sum(map(is_well_formed, sentences)), len(sentences)
