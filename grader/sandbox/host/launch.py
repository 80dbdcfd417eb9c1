"""Starting a Python process that runs this grader, whatever folder it starts in.

`python -m grader...` puts the working folder first on `sys.path`: started from
inside a learner's clone, it would import the clone's own `grader/` package, and
the process trusted to run the sandbox would be the learner's. So every process
the grader starts (the fork server, a spawned worker, a gradebook's grade, the
Gradescope run) is started by `grader_command`: with `-P` where Python has it
(3.11+), and in any case through a short bootstrap, given on the command line
itself so that nothing on disk can replace it, which drops the working folder
from `sys.path`, checks where `grader` would be imported from before importing
it, and refuses to start, with exit code WRONG_GRADER and a message, unless it
is the very package that started it. It is best started in a folder nobody
else writes to (`neutral_folder`) as well.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from grader.locale import tr

# Exit code of a process that found another `grader` than the one that started it.
WRONG_GRADER = 78

# Kept to the standard library: nothing of the grader may be imported before the check.
BOOTSTRAP = """\
import importlib.util, os, sys
expected, module = sys.argv[1], sys.argv[2]
if not getattr(sys.flags, "safe_path", False) and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]
spec = importlib.util.find_spec("grader")
found = os.path.dirname(os.path.realpath(spec.origin)) if spec and spec.origin else None
if found != os.path.realpath(expected):
    sys.stderr.write(f"gpt-kata: refusing to start {module}: the grader package here is "
                     f"{found or 'missing'}, not {expected}, the grader that started it "
                     "(a folder named grader/ on its path?)\\n")
    sys.exit(WRONG_GRADER)
import grader
if os.path.dirname(os.path.realpath(grader.__file__)) != os.path.realpath(expected):
    sys.exit(WRONG_GRADER)
sys.argv = [module, *sys.argv[3:]]
import runpy
runpy.run_module(module, run_name="__main__", alter_sys=True)
""".replace("WRONG_GRADER", str(WRONG_GRADER))


def package_path() -> str:
    """The folder of the grader package this process runs (grader/sandbox/host/launch.py
    is two folders below it)."""
    return str(Path(__file__).resolve().parents[2])


def grader_command(module: str, *args: str, python: str | None = None) -> list[str]:
    """The argv that runs `python -m module args`, with `module` taken from this grader."""
    # -P: no script or working folder on sys.path (3.11+); the bootstrap covers 3.10.
    flags = ["-P"] if sys.version_info >= (3, 11) else []
    return [python or sys.executable, *flags, "-c", BOOTSTRAP, package_path(), module, *args]


def installed_elsewhere() -> str | None:
    """The `grader` the processes this grader starts would import, where that is not
    this one: another folder, or "" for none; None when it is this one.

    They differ when this process imported its `grader` from the working folder
    (`python -m grader` in a checkout) and the environment installs another checkout's,
    or none: each process would then refuse to start (BOOTSTRAP), and a grade would
    say only that its fork server stopped. The lookup is the bootstrap's, made here
    without starting a process: the import system's finders, without the working
    folder. Only looked up when the working folder is where this `grader` came from."""
    ours = Path(package_path())
    first = sys.path[0] if sys.path and not getattr(sys.flags, "safe_path", False) else None
    if first is None or Path(first or os.getcwd()).resolve() != ours.parent:
        return None
    import importlib.machinery

    rest = sys.path[1:]
    for finder in sys.meta_path:
        try:
            if finder is importlib.machinery.PathFinder:
                spec = finder.find_spec("grader", rest)
            else:
                spec = finder.find_spec("grader", None)  # type: ignore[call-arg]
        except Exception:  # noqa: BLE001 - a finder's failure: the next one decides
            continue
        if spec is not None:
            found = Path(spec.origin).resolve().parent if spec.origin else None
            return None if found == ours else str(found or "")
    return ""


def neutral_folder() -> str:
    """A folder to start processes in that no learner can write to: this grader's own
    package's parent (the checkout, or site-packages), whose `grader` is this one."""
    return str(Path(package_path()).parent)


def refusal(code: int | None) -> str | None:
    """What an exit code says about a process that refused to start, if it did."""
    if code == WRONG_GRADER:
        return tr("it refused to start: the `grader` it would import is not the installed "
                  "grader that started it (is there a folder named grader/ where it started?)")
    return None
