"""Learner text made safe to show and to store, in one place.

Whatever a submission prints or raises, and whatever a learner calls their
folder, reaches terminals, JSON, JUnit, CSV, Gradescope and Markdown. Raw, it
could erase lines and paint a green pass (ESC sequences, carriage returns),
reorder what a reader sees (bidi overrides), crash an encoder (lone
surrogates), or forge a line of its own (newlines in a one-line message).

So every such character is shown as an escape a reader can see (`\\x1b`,
`\\u202e`, `\\ud800`), never obeyed. Two shapes:

- `visible(text)`: one line, for messages, names and table cells; a newline is
  shown as `\\n`, a tab as `\\t`.
- `visible(text, lines=True)`: for blocks that show many lines on purpose
  (what the code printed, a failure message with its inputs); newlines and
  tabs stay, everything else is escaped as above.

`folder_name` adds what names need on top: losslessness. A name that is not
valid UTF-8 keeps its bytes as `\\xNN`, and a backslash in it is doubled, so
two different folders never get the same label.
"""

from __future__ import annotations

import os
import re

# C0 controls but newline and tab, DEL, C1 controls, the bidi formatting
# characters (embeddings, overrides, isolates, marks), the line and paragraph
# separators some viewers break lines at, lone surrogates (which no UTF
# encoder accepts; Python's strings can hold them), and the invisible ones that
# hide text between the letters a reader sees (the zero-width space, the word
# joiner and invisible operators, the byte-order mark, the interlinear
# annotation marks, the soft hyphen, the grapheme joiner, the Hangul fillers, the
# Khmer and Mongolian invisible marks, the deprecated shaping controls, and the tag
# characters, which spell a hidden ASCII text in an invisible copy of it). The
# zero-width joiners and the variation selectors stay: scripts and emoji need them.
_UNSAFE = ("\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u034f\u061c\u115f\u1160\u17b4\u17b5"
           "\u180b-\u180f\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
           "\u3164\ufeff\uffa0\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f")
_BLOCK = re.compile(f"[{_UNSAFE}]")
_LINE = re.compile(f"[{_UNSAFE}\n\t]")
_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}

# What a spreadsheet starts a formula with (OWASP, "CSV Injection"), and the quote
# that neutralises one, which is itself quoted so that `uncell` can undo it.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: object, lines: bool = False) -> str:
    """`text` with every control character, bidi override and lone surrogate escaped
    visibly; newlines and tabs kept only with `lines`."""
    if text is None:
        return ""
    return (_BLOCK if lines else _LINE).sub(_escape, str(text))


def visible_or_none(text: str | None, lines: bool = False) -> str | None:
    return None if text is None else visible(text, lines)


def folder_name(name: str | bytes) -> str:
    """A file or folder name as one safe line that keeps every byte: undecodable
    bytes (surrogate-escaped by the file system's decoding) become `\\xNN`."""
    raw = os.fsencode(name)
    text = raw.decode("utf-8", errors="surrogateescape").replace("\\", "\\\\")
    text = re.sub("[\udc80-\udcff]", lambda m: f"\\x{ord(m.group()) - 0xdc00:02x}", text)
    return visible(text)


def cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    return f"'{text}" if text.startswith(_FORMULA_START) else text


def uncell(text: str) -> str:
    """The text `cell` was given."""
    return text[1:] if text.startswith("'") else text


def markdown_cell(text: str) -> str:
    """Text for a GitHub Markdown table cell: no HTML, no code spans, no way out
    of the cell or the table."""
    text = visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # Any ASCII punctuation may be backslash-escaped in CommonMark; these are the
    # ones that start code, emphasis, links, or end a cell.
    return re.sub(r"([\\`*_\[\]()|~!#])", r"\\\1", text)


# Errors whose message the grader itself writes over several lines (what a module's
# weights were expected to be called, and what they are called).
_MULTI_LINE_ERRORS = ("KnownWeightsError", "ParameterNamesError")


def learner_error(error: dict) -> dict:
    """A worker's error report with the learner's text in it (the exception's type
    and message, file and traceback lines) made visible: one line each, so that
    an exception's message cannot add lines of its own to a report."""
    lines = error.get("type") in _MULTI_LINE_ERRORS
    safe = {key: visible(value, lines and key == "message") if isinstance(value, str) else value
            for key, value in error.items()}
    if isinstance(error.get("frames"), list):
        safe["frames"] = [visible(frame) for frame in error["frames"]]
    return safe
