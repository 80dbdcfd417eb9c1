"""What a submission printed, kept within a size without losing count of its lines.

Output is cut in three places on its way to a report: by the worker for each call,
by the grader for each check, and by the report (Exercism's 500 characters, the
terminal's ten lines). Each cut ends at a line end and keeps, as a number among the
lines, how many lines it left out there; a later cut that drops an earlier one adds
its count, so the count a reader sees is of every line printed. The marker line
that says so ("… (N more lines; output truncated)") is made only where output is
shown (`Printed.text`, grader/reports/report.py): no cut reads one back.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from grader.locale import tr


def more(count: int) -> str:
    return f"{count} more line{'s' if count != 1 else ''}"


def marker(count: int) -> str:
    if count == 1:
        return tr("… ({count} more line; output truncated)", count=count)
    return tr("… ({count} more lines; output truncated)", count=count)


@dataclass(frozen=True)
class Printed:
    """Printed lines (each with its line end; the last may have none) and, among them,
    the counts of the lines cut out there."""

    items: tuple[str | int, ...] = ()

    @classmethod
    def of(cls, text: str, cut: int = 0) -> Printed:
        """`text` as printed, then `cut` lines left out."""
        return cls(tuple(text.splitlines(keepends=True)) + ((cut,) if cut else ()))

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def text(self) -> str:
        """As it is shown: each cut a marker line."""
        return "".join(line(item) for item in self.items)

    def kept(self) -> tuple[str, int]:
        """The lines kept, as one text, and the count of lines cut after them: how a
        worker sends a call's output, which it cuts once, at its end."""
        if any(isinstance(item, int) for item in self.items[:-1]):
            raise ValueError("lines were cut before the end")
        if self.items and isinstance(self.items[-1], int):
            return "".join(self.items[:-1]), self.items[-1]  # type: ignore[arg-type]
        return "".join(self.items), 0  # type: ignore[arg-type]

    def each_line(self, change: Callable[[str], str]) -> Printed:
        """The same output with `change` applied to each printed line (not to the cuts);
        the lines are then split again, where `change` took a line end away (an escaped
        "\\r") or made one."""
        changed = (change(item) if isinstance(item, str) else item for item in self.items)
        return joined(Printed.of(item) if isinstance(item, str) else Printed((item,))
                      for item in changed)


def as_printed(output: Printed | str | None) -> Printed:
    """`output` as Printed: plain text is output of which nothing was cut."""
    if isinstance(output, Printed):
        return output
    return Printed.of(output or "")


def joined(outputs: Iterable[Printed | str]) -> Printed:
    """What several calls printed, one after another, as if printed at once: a last
    line without its end runs on into the next call's first."""
    items: list[str | int] = []
    for output in outputs:
        more_items = list(as_printed(output).items)
        if items and more_items and isinstance(items[-1], str) and isinstance(more_items[0], str):
            # Split again: the two may make one line, or end one ("\r" then "\n").
            items[-1:] = (items[-1] + more_items.pop(0)).splitlines(keepends=True)
        items.extend(more_items)
    return Printed(tuple(items))


def line(item: str | int) -> str:
    """One item as it is shown: a printed line, or a cut's marker line."""
    return item if isinstance(item, str) else marker(item) + "\n"


def after(items: tuple[str | int, ...]) -> list[int]:
    """For each index i, how many printed lines come after items[i] (and one more
    entry, for before the first item: all of them)."""
    # A printed line stands for one line, a cut for its count; summed from the end,
    # rest[i] counts items[i:], so what follows items[i] is rest[i + 1].
    counts = (1 if isinstance(item, str) else item for item in reversed(items))
    return list(accumulate(counts, initial=0))[::-1]


def clip(output: Printed | str, limit: int) -> Printed:
    """`output` if it is shown in `limit` characters, else its first lines that are
    shown in them together with a marker saying how many printed lines were left out."""
    printed = as_printed(output)
    items = printed.items
    if len(printed.text) <= limit:
        return printed
    rest = after(items)
    kept = 0
    size = 0
    for index, item in enumerate(items):
        if size + len(line(item)) + len(marker(rest[index + 1])) + 1 > limit:
            break
        kept, size = index + 1, size + len(line(item))
    if not kept:  # even the first line is too long: it is cut inside, and says so
        end = "…\n"
        room = limit - len(end) - (len(marker(rest[1])) + 1 if rest[1] else 0)
        first = line(items[0]).rstrip("\n")[:max(room, 0)] + end
        return Printed((first,) + ((rest[1],) if rest[1] else ()))
    head = list(items[:kept])
    last = head[-1]
    if isinstance(last, str) and not last.endswith("\n"):
        head[-1] = last + "\n"
    return Printed((*head, rest[kept]))


# What str.splitlines() ends a line at; "\r\n" is one end.
_LINE_END = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


# Characters of a call's output past what Capture keeps that it holds before counting.
PENDING = 1 << 16


# Characters of what one call printed that a worker sends (a learners' copy's practice
# grade keeps as much).
CALL_OUTPUT_LIMIT = 4000
# Characters of it a worker holds while the call runs (more than it sends, so that
# the cut is made as on the whole output); past them it counts lines (Capture).
CALL_OUTPUT_KEPT = 2 * CALL_OUTPUT_LIMIT


class CapturedBytes(io.RawIOBase):
    """A Capture's `buffer`: what is written is decoded into it as text."""

    def __init__(self, text: Capture) -> None:
        super().__init__()
        self.text = text

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        written = memoryview(data).nbytes
        self.text.write(bytes(data).decode("utf-8", errors="replace"))
        return written


class Capture(io.TextIOBase):
    """A call's stdout that holds at most `keep` characters, whatever the call prints:
    past them it only counts the lines, as `Printed.of` would split the whole text, so
    that printing in a loop costs the worker no memory (an unbounded StringIO had it
    reach the memory limit and end, its output lost). `printed()` cut by `clip` to
    fewer than `keep` characters is the whole output so cut."""

    def __init__(self, keep: int) -> None:
        super().__init__()
        self.keep = keep
        self.head: list[str] = []
        self.size = 0
        self.lines: tuple[str, ...] | None = None  # once full: the lines of what it kept
        self.ends = 0  # line ends counted from the last of them on
        self.cr = False  # the text counted so far ends with "\r"
        self.open = False  # and its last line has no end yet
        # Text past them not counted yet: counted a block at a time, as a call that
        # prints line after line would otherwise spend more on counting than printing.
        self.pending: list[str] = []
        self.pending_size = 0

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"

    @property
    def buffer(self) -> CapturedBytes:
        """sys.stdout.buffer, as a real stdout has one: bytes written there are text
        here (undecodable ones replaced), not an AttributeError that failed every
        check of a file that wrote its output as bytes."""
        return CapturedBytes(self)

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"string argument expected, got '{type(text).__name__}'")
        written = len(text)
        if self.lines is not None:
            self.pending.append(text)
            self.pending_size += written
            if self.pending_size > PENDING:
                self.count_pending()
            return written
        room = self.keep - self.size
        self.head.append(text[:room])
        self.size += min(written, room)
        if written <= room:
            return written
        self.lines = tuple("".join(self.head).splitlines(keepends=True))
        self.head = []
        # The last line kept goes on past it (or its "\r" is a "\r\n"): it is
        # counted with what follows.
        self.count(self.lines[-1])
        self.count(text[room:])
        return written

    def count_pending(self) -> None:
        self.count("".join(self.pending))
        self.pending, self.pending_size = [], 0

    def count(self, text: str) -> None:
        if not text:
            return
        ends = len(_LINE_END.findall(text))
        if self.cr and text[0] == "\n":
            ends -= 1  # the "\r" that ended the last text and this "\n" are one end
        self.ends += ends
        self.cr = text[-1] == "\r"
        self.open = _LINE_END.fullmatch(text[-1]) is None

    def printed(self) -> Printed:
        """What was printed; once more than `keep` characters, the lines kept (the last
        one only begun) and how many lines came after them, which `clip` to fewer
        than `keep` characters cuts as it would cut the whole text."""
        if self.lines is None:
            return Printed.of("".join(self.head))
        self.count_pending()
        after = self.ends + self.open - 1
        return Printed((*self.lines, after) if after else self.lines)
