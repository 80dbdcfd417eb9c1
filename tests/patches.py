"""Small patches of a base file, written by hand: a learner's mistake as the lines it changes.

A patch is a unified diff without line numbers or file headers::

     a line of the base, kept as it is (it starts with a space)
    -a line of the base, taken out
    +a line put in its place

A line starting with `@@` starts the next hunk; anything after the `@@` is
ignored, so a hunk header pasted from `diff -u` does no harm. An empty line
inside a hunk stands for an empty line of the base: editors strip the lone
space such a context line would carry. Empty lines at either end of a hunk are
padding and ignored.

Each hunk's old side (its context and `-` lines, in order) must occur exactly
once in the base, as consecutive lines, and the hunks must follow the order of
the base without overlapping. Anything else is a `PatchError` naming the hunk
and the line, so a patch that stops fitting its base fails loudly instead of
quietly producing some other file.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class PatchError(ValueError):
    """The patch is malformed or does not fit its base; the message says where."""


@dataclass
class Hunk:
    number: int  # counted from 1, for messages
    old: list[str] = field(default_factory=list)  # context and `-` lines
    new: list[str] = field(default_factory=list)  # context and `+` lines


def parse(patch: str) -> list[Hunk]:
    blocks: list[list[str]] = [[]]
    for line in patch.splitlines():
        if line.startswith("@@"):
            blocks.append([])
        else:
            blocks[-1].append(line)
    # The padding around a patch written inside a TOML string, or an `@@` on its
    # first line, leaves empty blocks: they are not hunks.
    blocks = [block for block in map(strip_empty, blocks) if block]
    if not blocks:
        raise PatchError("the patch changes nothing")
    return [hunk(number, block) for number, block in enumerate(blocks, start=1)]


def strip_empty(block: list[str]) -> list[str]:
    start, end = 0, len(block)
    while start < end and block[start] == "":
        start += 1
    while end > start and block[end - 1] == "":
        end -= 1
    return block[start:end]


def hunk(number: int, block: list[str]) -> Hunk:
    made = Hunk(number)
    for line in block:
        mark, text = line[:1], line[1:]
        if mark in ("", " "):
            made.old.append(text)
            made.new.append(text)
        elif mark == "-":
            made.old.append(text)
        elif mark == "+":
            made.new.append(text)
        else:
            raise PatchError(f"hunk {number}: a line must start with ' ', '-' or '+': {line!r}")
    if not made.old:
        raise PatchError(f"hunk {number} only adds lines: give a context line (starting "
                         "with a space) to say where they go")
    return made


def locate(hunk: Hunk, base: list[str]) -> int:
    """Where in `base` the hunk's old side starts, if it is there exactly once."""
    size = len(hunk.old)
    starts = [i for i in range(len(base) - size + 1) if base[i:i + size] == hunk.old]
    if len(starts) > 1:
        where = ", ".join(str(i + 1) for i in starts)
        raise PatchError(f"hunk {hunk.number} fits the base at lines {where}: "
                         "add context lines to say which")
    if not starts:
        # Blame the line that ends the longest run of matching lines: it is the line
        # of the base that changed since the patch was written, or a typo in the patch.
        best = max((matching(hunk.old, base[i:]) for i in range(len(base))), default=0)
        after = f" after {hunk.old[best - 1].strip()!r}" if best else ""
        raise PatchError(f"hunk {hunk.number}: line {hunk.old[best].strip()!r} is not in "
                         f"the base{after}")
    return starts[0]


def matching(lines: list[str], base: list[str]) -> int:
    """How many of `lines` match the start of `base`."""
    count = 0
    for line, other in zip(lines, base):
        if line != other:
            break
        count += 1
    return count


def apply(patch: str, base: str) -> str:
    """The base with the patch applied; a `PatchError` if the patch does not fit exactly."""
    lines = base.splitlines()
    out: list[str] = []
    done = 0  # lines of the base already copied or replaced
    for hunk in parse(patch):
        start = locate(hunk, lines)
        if start < done:
            raise PatchError(f"hunk {hunk.number} is out of order: it starts at line "
                             f"{start + 1} of the base, inside or above the hunk before it")
        out += lines[done:start] + hunk.new
        done = start + len(hunk.old)
    out += lines[done:]
    text = "\n".join(out)
    return text + "\n" if base.endswith("\n") and out else text
