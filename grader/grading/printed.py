"""What a submission printed, kept within a size without losing count of its lines.

Output is cut in three places on its way to a report: by the worker for each call,
by the grader for each check, and by the report (Exercism's 500 characters, the
terminal's ten lines). Each cut ends at a line end and adds one marker line saying
how many lines it left out; a later cut that drops an earlier marker counts the
lines that marker stood for, so the count a reader sees is of every line printed.
"""

from __future__ import annotations

import re

MARKER = re.compile(r"^… \((\d+) more lines?; output truncated\)$")


def more(count: int) -> str:
    return f"{count} more line{'s' if count != 1 else ''}"


def marker(count: int) -> str:
    return f"… ({more(count)}; output truncated)"


def weights(lines: list[str]) -> list[int]:
    """How many printed lines each line stands for: a marker stands for its count."""
    found = (MARKER.match(line.rstrip("\n")) for line in lines)
    return [int(m.group(1)) if m else 1 for m in found]


def after(lines: list[str]) -> list[int]:
    """For each index i, how many printed lines come after lines[i] (and one more
    entry, for before the first line: all of them)."""
    counts = weights(lines)
    rest = [0] * (len(lines) + 1)
    for i in range(len(lines) - 1, -1, -1):
        rest[i] = rest[i + 1] + counts[i]
    # rest[i] counts lines[i:]; what follows lines[i] is rest[i + 1].
    return rest


def clip(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its first lines that fit together
    with a marker saying how many printed lines were left out."""
    if len(text) <= limit:
        return text
    lines = text.splitlines(keepends=True)
    rest = after(lines)
    kept = 0
    size = 0
    for index, line in enumerate(lines):
        if size + len(line) + len(marker(rest[index + 1])) + 1 > limit:
            break
        kept, size = index + 1, size + len(line)
    if not kept:  # even the first line is too long: it is cut inside, and says so
        end = "…\n" + (marker(rest[1]) + "\n" if rest[1] else "")
        return lines[0].rstrip("\n")[:max(limit - len(end), 0)] + end
    head = "".join(lines[:kept])
    return head + ("" if head.endswith("\n") else "\n") + marker(rest[kept]) + "\n"
