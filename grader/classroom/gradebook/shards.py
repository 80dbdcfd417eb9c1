"""Which share of a class a gradebook holds, so that a merge can tell a whole class
from one with a shard missing.

`gradebook --shard K/N` writes `K/N` to DIR/.gradebook-shard.json; an unsharded run
removes it. `gradebook --merge` then refuses a set of shards that is not every K of
one N (a runner that failed uploads nothing, and its learners would silently have
no row), unless told `--allow-partial`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.classroom.gradebook.outputs import replace_whole
from grader.learner.errors import UsageError
from grader.locale import tr

SHARD_FILE = ".gradebook-shard.json"


def record(out: Path, shard: tuple[int, int] | None) -> None:
    """Say which share `out` holds (none: the whole roster)."""
    path = out / SHARD_FILE
    if shard is None:
        path.unlink(missing_ok=True)
        return
    replace_whole(path, json.dumps({"shard": f"{shard[0]}/{shard[1]}"}) + "\n")


def recorded(folder: Path) -> tuple[int, int] | None:
    """The K/N a gradebook folder holds, None for a whole roster."""
    try:
        text = json.loads((folder / SHARD_FILE).read_text(encoding="utf-8"))["shard"]
        k_text, _, n_text = str(text).partition("/")
        k, n = int(k_text), int(n_text)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(tr("{file}: not a shard record", file=folder / SHARD_FILE)) from None
    if not 1 <= k <= n:
        raise UsageError(tr("{file}: {k}/{n} is not a shard", file=folder / SHARD_FILE, k=k,
                            n=n))
    return k, n


def check_complete(folders: list[Path], allow_partial: bool) -> list[str]:
    """The shards missing from `folders` (as "K/N"); a usage error when some are
    missing and that is not allowed, or when the folders are shards of different
    splits of the class."""
    shares = [(folder, recorded(folder)) for folder in folders]  # a folder given twice counts twice
    sharded = [(folder, share) for folder, share in shares if share is not None]
    if not sharded:
        return []
    whole = [str(folder) for folder, share in shares if share is None]
    if whole:
        raise UsageError(tr("{folders} holds a whole roster, the others shards of one",
                            folders=", ".join(whole)))
    counts = {n for _, (_, n) in sharded}
    if len(counts) > 1:
        raise UsageError(tr("these are shards of different splits: {shards}",
                            shards=", ".join(tr("{folder} is {k}/{n}", folder=folder, k=k, n=n)
                                             for folder, (k, n) in sharded)))
    (n,) = counts
    seen: dict[int, Path] = {}
    for folder, (k, _) in sharded:
        if k in seen:
            raise UsageError(tr("shard {k}/{n} is both {one} and {other}", k=k, n=n,
                                one=seen[k], other=folder))
        seen[k] = folder
    missing = [f"{k}/{n}" for k in range(1, n + 1) if k not in seen]
    if missing and not allow_partial:
        raise UsageError(tr("shards missing: {shards}; their learners would have no row "
                            "(grade them, or merge with --allow-partial)",
                            shards=", ".join(missing)))
    if missing:
        print("gpt-kata gradebook: " + tr("merging with shards missing: {shards}; "
                                          "their learners have no row", shards=", ".join(missing)),
              file=sys.stderr)
    return missing


def shard_of(learners: dict[str, Path], k: int, n: int) -> dict[str, Path]:
    """Every n-th learner in name order, from the k-th: dealt like cards, so the
    shards stay within one learner of each other in size, whatever the names."""
    names = list(learners)[k - 1::n]
    return {name: learners[name] for name in names}


def shard_spec(text: str) -> tuple[int, int]:
    """An argparse type: K/N with 1 <= K <= N."""
    k_text, slash, n_text = text.partition("/")
    try:
        k, n = int(k_text), int(n_text)
    except ValueError:
        k = n = 0
    if not slash or not 1 <= k <= n:
        raise argparse.ArgumentTypeError(tr("{text!r}: K/N with 1 <= K <= N, e.g. 2/4",
                                            text=text))
    return k, n
