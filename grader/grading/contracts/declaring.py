"""The problem a check module declares its contracts for, handed to it as it loads.

A check module's contracts belong to the problem whose grading folder holds it
(grader.registry.Problem.checks), so the module does not name it. The import system
hands it over: a finder at the head of sys.meta_path knows a check module by its
file, under whatever name it is imported (pytest imports it as check_<slug>, the
tools as grader.checks.<slug>.check_<slug>), and runs its top level with DECLARING
set to that problem's slug. A check module that imports another's helpers runs that
one's top level with that one's problem, and gets its own back after.
"""

from __future__ import annotations

import importlib
import sys
from contextvars import ContextVar
from functools import cache
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grader.registry import Problem

# The slug of the problem whose check module's top level is running, or "".
DECLARING: ContextVar[str] = ContextVar("declaring_problem", default="")


@cache
def _check_files() -> dict[Path, str]:
    from grader.registry import problems

    return {p.checks.resolve(): p.slug for p in problems()}


class _Declaring(Loader):
    """A check module's own loader, run with its problem declared."""

    def __init__(self, loader: Loader, slug: str) -> None:
        self.loader, self.slug = loader, slug

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        token = DECLARING.set(self.slug)
        try:
            self.loader.exec_module(module)
        finally:
            DECLARING.reset(token)

    def __getattr__(self, name: str) -> Any:
        if name == "loader":  # not set yet (a copy being made): no lookup of itself
            raise AttributeError(name)
        return getattr(self.loader, name)  # get_source for tracebacks, and the like


class CheckModuleFinder(MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if not fullname.rpartition(".")[2].startswith("check_"):
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.origin is None or spec.loader is None:
            return None
        slug = _check_files().get(Path(spec.origin).resolve())
        if slug is None:
            return None
        spec.loader = _Declaring(spec.loader, slug)
        return spec


def install() -> None:
    """Put the finder first on sys.meta_path, once per process."""
    if not any(isinstance(finder, CheckModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, CheckModuleFinder())


def load_check_module(problem: Problem) -> ModuleType:
    """A problem's check module, for a tool that reads its contract outside a grade.
    A problem registered before its checks are written is told which file to write,
    where the import alone would name only a package, grader.checks.<slug>."""
    if not problem.checks.is_file():
        raise ModuleNotFoundError(
            f"{problem.folder} has no check module: write {problem.checks} (step 4 of "
            "docs/pages/contributors/adding-a-problem.md)", name=problem.checks_module)
    return importlib.import_module(problem.checks_module)


# Installed by whatever loads check modules: the grade's engine, through Contract, and
# any import of grader.checks.<slug>.check_<slug>, through grader/checks/__init__.py.
install()
