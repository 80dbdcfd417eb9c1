"""The forward passes of the models every grade builds alike, kept between practice grades.

A grade runs the reference on the shipped models and on seeded random ones, and a
passing submission asks them for the same windows in its worker: a passing grade of
generate spent about 0.17 s of its checks' 0.33 s in those passes, on both sides of the
pipe, each computing them again. The logits depend only on the token ids, the
weights, the model's code, torch and the CPU's instructions (AVX2 and AVX-512 round
differently); so a practice grade keeps the passes the reference ran, in `.gpt-kata/`
of the kata folder, in a file named for all of those, and the next one looks each
window up there first, in the grader and in the worker, before computing it.

Only the grader's own process writes the file, with the reference's passes (and the
known mistakes', run here), never a worker's. A classroom grade neither reads nor
writes it (`use` is never called there): it computes every pass, since a learner's
repository may hold any file under that name, and the windows the reference read
(its answers to the checks) must not be handed to the code it grades.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from grader.model import artifacts
from grader.model.spec import ModelSpec

# Bounded, so that a grade of every problem keeps a file of 16 MB at the most; the
# windows of the latest grade are kept first.
STORE_ELEMENTS = 4_000_000
# The kinds of model each side builds for itself, from the spec alone.
KINDS = ("shipped", "modern", "random")
# What besides the platform decides the logits: the weights and the code that builds
# and runs the models (a random model's weights come from artifacts.py's seeding, and
# the sizes a spec leaves out from config.py's defaults).
SOURCES = ("gpt.py", "llama.py", "artifacts.py", "config.py")
FORMAT = "2"  # of the file: a change of how entries are named or checked is a new file

Lookup = Callable[[tuple], "torch.Tensor | None"]


class ForwardStore:
    """One kata folder's kept passes, read lazily (a worker maps the file before its
    sandbox closes, then reads only the windows it is asked for), and the memos whose
    passes the grade adds to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: Any = None
        self._digests: dict[str, str] = {}  # each entry's, as written: a damaged one differs
        self._names: set[str] = set()
        self._memos: list[tuple[tuple, Any]] = []
        self._lock = threading.Lock()
        with contextlib.suppress(Exception):  # absent, unreadable or not a store: empty
            from safetensors import safe_open

            # Only a file: a FIFO in its place would block the opening grader forever.
            if not stat.S_ISREG(os.stat(path).st_mode):
                return
            opened = safe_open(str(path), "pt")
            metadata = opened.metadata() or {}
            digests = json.loads(metadata.get("digests", "{}"))
            if metadata.get("format") == FORMAT and isinstance(digests, dict):
                self._file, self._digests = opened, digests
                self._names = set(opened.keys()) & digests.keys()

    def __len__(self) -> int:
        """How many passes the file keeps."""
        return len(self._names)

    def lookup(self, spec: ModelSpec) -> Lookup | None:
        """The kept passes of `spec`'s model, for its memo's `also`; None for a model
        that is not built alike on both sides."""
        if spec.kind not in KINDS or self._file is None:
            return None
        prefix = _prefix(spec.key())

        def kept(key: tuple) -> torch.Tensor | None:
            name = prefix + _digest(key)
            return self._read(name) if name in self._names else None

        return kept

    def _read(self, name: str) -> torch.Tensor | None:
        """The entry `name`, or None where it cannot be read or is not what was written
        (a damaged file, which the next save then writes without it)."""
        with self._lock, contextlib.suppress(Exception):
            # A copy: safetensors hands out views of the mapped file, which would keep
            # it open, and Windows replaces no file that is open.
            logits = self._file.get_tensor(name).clone()
            if _checksum(logits) == self._digests.get(name):
                return logits
            self._names.discard(name)
        return None

    def keep(self, spec: ModelSpec, model: Any) -> None:
        """Add the passes of `model`'s memo (reference.fresh's) to what `save` writes."""
        if spec.kind in KINDS and hasattr(model, "remembered_entries"):
            self._memos.append((spec.key(), model))

    def save(self) -> None:
        """Write the kept passes and the grade's new ones, the new first within the
        bound; nothing when the grade computed no window the file lacked. Whatever
        stops it (a folder that cannot be written, a full disk) leaves the file as it
        was, and the grade goes on: the next one computes them again."""
        with contextlib.suppress(Exception):
            self._save()

    def _save(self) -> None:
        new: dict[str, torch.Tensor] = {}
        for key, model in reversed(self._memos):  # the latest model's first
            prefix = _prefix(key)
            # A memo holds its windows oldest first: the latest are kept first.
            for window, logits in reversed(model.remembered_entries().items()):
                name = prefix + _digest(window)
                if name not in self._names:
                    new[name] = logits.contiguous()
        if not new:
            return
        entries, held = {}, 0
        for name, logits in new.items():
            if held + logits.numel() > STORE_ELEMENTS:
                break
            entries[name], held = logits, held + logits.numel()
        # The file as it is now: a grade's helper process saved its share meanwhile.
        current = ForwardStore(self.path)
        for name in sorted(current._names - entries.keys()):
            logits = current._read(name)
            if logits is None:
                continue
            if held + logits.numel() > STORE_ELEMENTS:
                break
            entries[name], held = logits, held + logits.numel()
        # Windows replaces no file that is open, and a mapped one is.
        current._file = self._file = None
        self.path.parent.mkdir(exist_ok=True)
        _write(self.path, entries)
        for other in self.path.parent.glob("forwards-*.safetensors"):
            if other != self.path:  # another torch's, CPU's or weights': stale
                other.unlink(missing_ok=True)


def _write(path: Path, entries: dict[str, torch.Tensor]) -> None:
    from safetensors.torch import save_file

    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".forwards-")
    os.close(handle)
    try:
        digests = json.dumps({name: _checksum(logits) for name, logits in entries.items()})
        # Not synced to the disk first (a millisecond of the 11 ms a save takes, on the
        # critical path of a learner's first grade): a file a crash cut short does not
        # open, or fails its digests, and is computed again.
        save_file(entries, temporary, metadata={"format": FORMAT, "digests": digests})
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _checksum(logits: torch.Tensor) -> str:
    return hashlib.blake2b(logits.contiguous().numpy().tobytes(), digest_size=8).hexdigest()


def _digest(window: tuple) -> str:
    shape, ids = window
    return hashlib.blake2b(repr(shape).encode() + ids, digest_size=16).hexdigest()


def _prefix(key: tuple) -> str:
    """The entries' name prefix of the model whose ModelSpec.key() is `key`."""
    return hashlib.blake2b(repr(key).encode(), digest_size=8).hexdigest() + "/"


def store_path(folder: Path) -> Path:
    """The file of this platform's passes in `folder`: its name changes with torch, the
    CPU's instructions, the shipped weights and the models' code."""
    parts = [FORMAT, repr(sorted(artifacts.this_platform().items()))]
    model_code = Path(artifacts.__file__).parent
    shipped = (artifacts.CHECKPOINT, artifacts.CONFIG, artifacts.LLAMA_CHECKPOINT,
               artifacts.LLAMA_CONFIG)
    for file in (*shipped, *(model_code / name for name in SOURCES)):
        try:
            parts.append(hashlib.sha256(Path(file).read_bytes()).hexdigest())
        except OSError:
            parts.append("")
    identity = hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]
    return folder / f"forwards-{identity}.safetensors"


# The store of this process's grade, where one is in use.
_IN_USE: ForwardStore | None = None


def use(path: Path | None) -> ForwardStore | None:
    """Look passes up in (and keep them for) the store at `path` in this process;
    None: in no store."""
    global _IN_USE
    _IN_USE = ForwardStore(path) if path is not None else None
    return _IN_USE


def in_use() -> ForwardStore | None:
    return _IN_USE
