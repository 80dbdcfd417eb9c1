"""What a worker may read: what Python needs to run torch, and the submission's
folder, never the grader's private folders."""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
from pathlib import Path


def learner_problems_folder(folder: Path, private: list[Path]) -> Path | None:
    """The parent of a learner's NN-slug folder, when it is a problems/ folder.

    It qualifies when it is named problems, or when every folder in it is an
    NN-slug folder (a roster learner's folder, the gradebook's staging), and it
    neither holds nor lies in any of the grader's private folders. A checkout
    as a whole is private, but the learner's problems/ in it is theirs.
    """
    from grader.reuse import PROBLEM_FOLDER

    parent = folder.parent
    if not PROBLEM_FOLDER.fullmatch(folder.name) or parent == folder:
        return None
    checkout = _checkout_root()
    for p in private:
        if inside(p, parent) or (inside(parent, p) and p != checkout):
            return None
    if parent.name != "problems":
        try:
            entries = [e for e in parent.iterdir() if not e.name.startswith(".")]
        except OSError:
            return None
        if any(e.is_dir() and not PROBLEM_FOLDER.fullmatch(e.name) for e in entries):
            return None
    return parent


def _checkout_root() -> Path | None:
    """The repository the grader runs from, when it is a checkout (not installed)."""
    try:
        from grader import paths
    except ImportError:
        return None
    return None if paths.INSTALLED else paths.ROOT.resolve()


def grader_private_paths() -> list[str]:
    """Folders a submission must never be able to read: the grader's checks,
    reference solutions, data, history and its own package."""
    try:
        from grader import paths
    except ImportError:  # the module used on its own
        return []
    package = Path(paths.__file__).resolve().parent
    private = [paths.SOLUTIONS, paths.DATA, paths.CHECKS, paths.STATE, paths.ROOT / ".git",
               package]
    # A checkout (editable install) as a whole is private too; an installed package's
    # parent is site-packages, which must stay readable.
    if (paths.ROOT / "pyproject.toml").exists() or (paths.ROOT / ".git").exists():
        private.append(paths.ROOT)
    return [str(Path(p).resolve()) for p in private]


def inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _without(candidate: Path, denied: list[Path]) -> list[Path]:
    """``candidate``, or where it contains a denied folder, its parts around it.

    A Landlock rule covers a whole hierarchy, so an ancestor of a private folder
    cannot be granted; its other entries can, one by one. A rule is made on what a
    path points to: an entry that is a link is taken where it points, or a venv's
    `lib64 -> lib` would grant the `lib` that holds the installed grader.
    """
    inner = [d for d in denied if d != candidate and candidate in d.parents]
    if candidate in denied:
        return []
    if not inner:
        return [candidate]
    kept: list[Path] = []
    try:
        entries = sorted(candidate.iterdir())
    except OSError:
        return []
    for entry in entries:
        if entry.is_symlink():
            target = Path(os.path.realpath(entry))
            if target.exists() and not any(inside(target, d) for d in denied):
                kept += _without(target, denied)
        elif any(inside(d, entry) for d in inner):
            if entry.is_dir():
                kept += _without(entry, denied)
        else:
            kept.append(entry)
    return kept


def readable_paths_for_python() -> list[str]:
    """What this interpreter needs to read to run torch, minus the grader's private
    folders.

    Found by trial: under Landlock with only these paths, a fresh interpreter
    imports torch and runs a small model. A path inside a private folder that
    Python needs (a virtual environment in the checkout) stays readable, but no
    rule ever covers a private folder itself.
    """
    denied = [Path(p).resolve() for p in grader_private_paths()]
    candidates: list[str] = [
        sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
    ]
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            candidates.append(sysconfig.get_paths()[key])
    with contextlib.suppress(Exception):
        import site

        candidates += site.getsitepackages()
    # Absolute sys.path entries (PYTHONPATH, .pth additions); '' and the current
    # folder are left out, since they are wherever the grader happened to start.
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the folder was removed under us
        cwd = ""
    candidates += [p for p in sys.path if os.path.isabs(p) and os.path.realpath(p) != cwd]
    # Shared libraries and the loader's cache; the devices Python and torch open.
    candidates += [
        "/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64",
        "/usr/local/lib", "/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo",
        "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
        # torch's CPU detection reads these when it is first imported (it prints
        # an error without /proc/cpuinfo); on ARM it reads /sys as well.
        "/proc/cpuinfo", "/sys/devices/system/cpu",
    ]
    seen: set[Path] = set()
    result: list[str] = []
    for candidate in candidates:
        if not candidate:
            continue
        path = Path(os.path.realpath(candidate))
        if not path.exists():
            continue
        for kept in _without(path, denied):
            if kept not in seen:
                seen.add(kept)
                result.append(str(kept))
    # Drop paths already covered by another one, so the ruleset stays small.
    result.sort(key=len)
    minimal: list[str] = []
    for p in result:
        if not any(inside(Path(p), Path(q)) for q in minimal):
            minimal.append(p)
    return minimal
