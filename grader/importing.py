"""Importing torch, pytest and hypothesis without the collector's detours.

Their imports allocate about a million objects that live as long as the process,
and every few hundred allocations trigger a collection that walks them and finds no
garbage: `import torch, pytest, hypothesis` took 1.68 s with the collector on and
1.53 s with it off (10 runs of each in turn). The grader, its fork server and its
spawned worker host import them once, inside `without_collections()`; their other
garbage is collected as usual.

The block's objects are then frozen (`gc.freeze`): left out of every later
collection. Otherwise the first allocation after the collector is turned back on
walks all of them at once, as the youngest generation (64 ms in a grade of one
problem, on the critical path), and every full collection after it does again.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def without_collections() -> Iterator[None]:
    """No automatic garbage collection in this block; what it made is frozen, the
    first time in this process, and the collector is turned back on after it, if it
    was on before."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        freeze_imports()
        if was_on:
            gc.enable()


def freeze_imports() -> None:
    """Leave everything made so far out of every later garbage collection, once.

    Once, right after the heavy imports: a long-lived process (watch, a notebook's
    kernel) must not freeze the garbage of its earlier grades, which could then
    never be collected.
    """
    global _frozen
    if not _frozen:
        gc.freeze()
        _frozen = True


_frozen = False
