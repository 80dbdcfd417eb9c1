"""The folders workers write in: made per grade, emptied between tenants, removed
whatever their files' modes."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def empty_folder(path: str) -> None:
    """Remove what is in a folder, keeping the folder (a host works in it)."""
    try:
        names = os.listdir(path)
    except OSError:  # gone, or never made: nothing in it
        return
    for name in names:
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            remove_tree(full)
        else:
            try:
                os.chmod(full, 0o600)
                os.remove(full)
            except OSError:
                pass


def new_scratch_root(inside: str | None = None) -> str:
    """A folder for everything one grade's workers write, removed as a whole.

    Made in the temporary folder, which a gradebook sets to a folder of its own
    for each learner's grade: whoever removes that removes every worker's scratch.
    `inside`: another root to make it in, so that whoever removes that removes
    this one too.
    """
    return tempfile.mkdtemp(prefix="gpt-kata-grade-", dir=inside)


# torch makes its cache folder (`torchinductor_<user>`, in the temporary folder unless
# this names another) when torch._dynamo is first imported, as building an optimizer
# does, and never removes it.
TORCH_CACHE_VARIABLE = "TORCHINDUCTOR_CACHE_DIR"


def torch_cache_in(root: str) -> str:
    """The folder where a grade's own processes (the grader, its servers, workers
    spawned without the sandbox) keep torch's cache: in the grade's scratch root,
    outside every worker's own folder, and removed with the root."""
    return os.path.join(root, "torch-cache")


@contextmanager
def torch_cache_kept_in(folder: str) -> Iterator[None]:
    """This process's torch cache in `folder` meanwhile, unless a folder was chosen
    already: by the learner, or by torch itself earlier in this process (it sets the
    variable when it first makes the folder), and then it stays theirs."""
    if TORCH_CACHE_VARIABLE in os.environ:
        yield
        return
    os.environ[TORCH_CACHE_VARIABLE] = folder
    try:
        yield
    finally:
        if os.environ.get(TORCH_CACHE_VARIABLE) == folder:  # else set meanwhile: not ours
            del os.environ[TORCH_CACHE_VARIABLE]


def remove_tree(path: str) -> None:
    """Remove a scratch folder, whatever its files' modes.

    A mode is changed only inside the folder, and never through a link: the folder's
    parent is the temporary folder everyone shares (a root grader once turned /tmp
    to 0700 removing a scratch folder already gone), and chmod follows links, which
    a worker may leave pointing anywhere.
    """
    top = os.path.abspath(path)

    def inside(name: str) -> bool:
        full = os.path.abspath(name)
        return not os.path.islink(full) and os.path.commonpath([top, full]) == top

    def retry(function: Callable, name: str, error: object) -> None:
        # onexc (3.12) passes the exception, onerror (3.11 and before) sys.exc_info()
        error = error[1] if isinstance(error, tuple) else error
        if isinstance(error, FileNotFoundError):
            return  # gone already: nothing to remove
        try:
            for folder in (os.path.dirname(name) or ".", name):
                if inside(folder):
                    os.chmod(folder, 0o700)
            function(name)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)
