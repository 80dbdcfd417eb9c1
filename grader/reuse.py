"""Your own earlier solutions, for a later problem: `solution_of("top-k")`.

In `problems/11-top-k-top-p/solution.py`::

    from grader.reuse import solution_of

    TopK = solution_of("top-k")   # your problems/09-top-k/solution.py's Solution

The earlier file is found next to the file that asks for it: in the same
`problems/` folder, whether that is your kata, a copy the gradebook grades, or
the temporary folder `check()` grades from a notebook. Asked from anywhere else
(a Python session, a notebook), it is found in the kata folder you started in.

Under the sandbox a submission may read its own problems/ folder and nothing of
the grader's (see `Policy.for_submission`), so this reads only files the
submission could read anyway. It imports nothing heavy and nothing from the
grader's data: the fork server loads it before any submission runs.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import os
import re
import sys
from pathlib import Path
from types import ModuleType

PROBLEM_FOLDER = re.compile(r"(\d\d)-([a-z0-9]+(?:-[a-z0-9]+)*)")


class ReuseError(ImportError):
    """An earlier solution could not be used; the message says what to do."""


class SourceOnly(importlib.machinery.SourceFileLoader):
    """Runs a learner's file from its text. Python's own loader runs a `__pycache__`
    file beside it instead, and one compiled from other code and marked never to be
    checked against the source is run without a look: a hand-in could carry code the
    instructor, the written-by-hand check and the similarity report never read."""

    def get_code(self, fullname: str) -> object:
        return self.source_to_code(self.get_data(self.path), self.path)


def source_spec(name: str, path: str | Path) -> importlib.machinery.ModuleSpec:
    """The spec that loads the file at `path` as module `name`, from its text."""
    spec = importlib.util.spec_from_file_location(name, path,
                                                  loader=SourceOnly(name, str(path)))
    assert spec is not None  # a loader given: a spec is always made
    return spec


def learner_file(filename: str, path: str) -> str | None:
    """How a frame's file is shown, if it is the submission file ("solution.py") or
    another problem's solution.py beside it ("23-gpt/solution.py"), which a call
    reaches through `solution_of` or `train --yours` runs; None for any other file."""
    file, target = (Path(os.path.normcase(os.path.abspath(name))) for name in (filename, path))
    if file == target:
        return target.name
    if file.name == target.name and file.parent.parent == target.parent.parent \
            and PROBLEM_FOLDER.fullmatch(file.parent.name):
        return f"{file.parent.name}/{file.name}"
    return None


def unfinished_methods(source: str) -> list[str]:
    """Methods whose body still ends by raising NotImplementedError, as a starter's do."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body \
                and isinstance(node.body[-1], ast.Raise):
            raised = node.body[-1].exc
            if isinstance(raised, ast.Call):
                raised = raised.func
            if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                names.append(node.name)
    return names


def problems_folder_of(file: str | Path | None) -> Path | None:
    """The problems/ folder a solution file sits in (its NN-slug folder's parent)."""
    if not file or str(file).startswith("<"):
        return None  # typed at a prompt or in a notebook cell
    folder = Path(file).resolve().parent
    return folder.parent if PROBLEM_FOLDER.fullmatch(folder.name) else None


def _default_problems() -> Path:
    from grader.paths import PROBLEMS

    return PROBLEMS


def _find(problems: Path, name: str | int) -> Path:
    key = str(name).strip().lower().replace("_", "-").rstrip("/")
    key = key.rsplit("/", 1)[-1]
    try:
        entries = sorted(e.name for e in problems.iterdir() if PROBLEM_FOLDER.fullmatch(e.name))
    except PermissionError:
        # A file graded on its own (--submission FILE, outside an NN-slug folder) may read
        # only itself under the sandbox: the kata's problems/ is out of its reach.
        raise ReuseError(
            f"solution_of({name!r}): {problems} cannot be read from this grade: a file "
            "graded on its own may read only itself. Grade it where it sits in problems/ "
            "(gpt-kata grade PROBLEM), or hand in a folder laid out like problems/ that "
            "holds the earlier solution too (--submission FOLDER)") from None
    except OSError:
        entries = []
    for entry in entries:
        number, slug = PROBLEM_FOLDER.fullmatch(entry).groups()  # type: ignore[union-attr]
        if key in (entry, slug) or (key.isdigit() and int(key) == int(number)):
            return problems / entry
    known = ", ".join(PROBLEM_FOLDER.fullmatch(e).group(2) for e in entries)  # type: ignore[union-attr]
    where = f"; the problems there are: {known}" if known else ""
    raise ReuseError(f"solution_of({name!r}): no such problem in {problems}{where}")


def _names_reused(source: str) -> list[str | int]:
    """The problems a source names in `solution_of(...)` calls, where the name is written out."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: list[str | int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = node.func
            callee = called.id if isinstance(called, ast.Name) else getattr(called, "attr", "")
            value = node.args[0].value
            if callee == "solution_of" and isinstance(value, str | int):
                names.append(value)
    return names


def earlier_files(file: Path) -> list[Path]:
    """The earlier solution files `file` takes with solution_of(...), and the ones
    those take in turn: saving any of them changes what `file` does."""
    problems = problems_folder_of(file)
    if problems is None:
        return []
    found: list[Path] = []
    todo = [file]
    while todo:
        try:
            source = todo.pop().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for name in _names_reused(source):
            try:
                earlier = _find(problems, name) / "solution.py"
            except ReuseError:
                continue
            if earlier != file and earlier not in found:
                found.append(earlier)
                todo.append(earlier)
    return found


def _load(file: Path, label: str) -> ModuleType:
    # A name of its own per file, so that two earlier solutions never share one,
    # and registered while it runs: dataclasses look their module up.
    name = f"kata_solution_{label.replace('-', '_')}"
    spec = source_spec(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except ReuseError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the earlier file raised, said plainly
        sys.modules.pop(name, None)
        raise ReuseError(f"your {label}/solution.py fails when it is loaded "
                         f"({type(exc).__name__}: {exc}); fix it first") from exc
    return module


def solution_of(problem: str | int, *, finished: bool = True, name: str = "Solution") -> type:
    """The `Solution` class of your own solution to an earlier problem.

    problem: its slug, number or folder ("top-k", 9, "09-top-k").
    finished: refuse a file whose methods still raise NotImplementedError, naming
        the problem to finish first (False takes it as it is).
    name: the class to take, for a problem whose class is a module
        (solution_of("multi-head-attention", name="CausalSelfAttention")).
    """
    caller = sys._getframe(1).f_globals.get("__file__")
    problems = problems_folder_of(caller) or _default_problems()
    folder = _find(problems, problem)
    file = folder / "solution.py"
    try:
        source = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReuseError(f"solution_of({problem!r}): cannot read {file} "
                         f"({exc.strerror or exc})") from None
    if finished:
        try:
            unwritten = unfinished_methods(source)
        except SyntaxError as exc:
            raise ReuseError(f"your {folder.name}/solution.py has a syntax error "
                             f"(line {exc.lineno}); fix it first") from None
        if unwritten:
            number, slug = PROBLEM_FOLDER.fullmatch(folder.name).groups()  # type: ignore[union-attr]
            methods = ", ".join(f"{m}()" for m in unwritten)
            raise ReuseError(f"problem {number} ({slug}) is not finished: {methods} still "
                             f"raises NotImplementedError in {folder.name}/solution.py. "
                             f"Finish it first (gpt-kata grade {slug}), or write that step "
                             "here instead")
    module = _load(file, folder.name)
    solution = getattr(module, name, None)
    if not isinstance(solution, type):
        raise ReuseError(f"your {folder.name}/solution.py has no class {name}")
    return solution
