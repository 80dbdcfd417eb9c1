"""Grade a class written in a notebook: `from grader import check; check("generate", Solution)`.

The class's source (which IPython and Jupyter keep for every cell) is written,
after the imports of the problem's starter, into a solution file in a
temporary folder laid out like problems/, and graded exactly as `gpt-kata
grade` grades a file: the same checks, the same worker processes and sandbox,
the same report. Names the class uses from other cells come along: modules as
imports, functions and classes defined in the notebook as their source, and
your earlier solutions (`solution_of`) as the same call. Your other solutions
are copied beside it, so that `solution_of` finds them there. `hint(PROBLEM)`
gives the next hint, first the fix for the mistake the last check() named.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import importlib
import inspect
import linecache
import math
import os
import shutil
import sys
import sysconfig
import tempfile
import textwrap
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader import paths
from grader.locale import marked, tr, translated
from grader.registry import Problem, find
from grader.reuse import PROBLEM_FOLDER

if TYPE_CHECKING:
    from grader.reports.report import Report
    from grader.sandbox.host.pool import WorkerPool

NO_SOURCE = marked(
    "check() grades the source of your class, and Python cannot find the source of {name}: "
    "it keeps it for classes defined in a Jupyter notebook, in IPython or in a file, but not "
    "at the plain `python` prompt, in exec() or in a cell that begins with a cell magic "
    "(%%time). Define the class in a notebook or IPython cell of its own, or save it in "
    "problems/{folder}/solution.py and run `gpt-kata grade {slug}`."
)


class CheckError(Exception):
    """The class cannot be graded as given; the message says what to do."""


def check(problem: str | int, solution: Any, *, verbose: bool = False) -> bool:
    """Grade `solution` (a class, or an instance of one) for `problem`, print the
    report `gpt-kata grade` prints, and return whether every check passed.

    problem: slug, number or folder, as on the command line ("generate", 6, "06-generate").
    verbose: show every failing check, as `gpt-kata grade -v` does.
    """
    from rich.markup import escape

    from grader.learner.output import console

    out = console()
    cls = solution if isinstance(solution, type) else type(solution)
    # The names the class can see: its module's (a notebook's cells share one), or
    # failing that, those of the code that called check().
    home = getattr(sys.modules.get(cls.__module__), "__dict__", None)
    names = {**sys._getframe(1).f_globals, **(home or {})}
    try:
        found = _problem(problem)
        source = solution_file(found, cls, names)
    except CheckError as exc:
        out.print(f"[red]✗[/] {escape(str(exc))}", highlight=False)
        return False
    return _grade(found, source, verbose, out)


def _problem(name: str | int) -> Problem:
    try:
        return find(str(name))
    except LookupError as exc:
        raise CheckError(str(exc)) from None


def solution_file(problem: Problem, cls: type, names: dict[str, Any]) -> str:
    """The text of a solution file holding `cls`, under the name the problem's grader
    looks for (Solution, or the module's: Head, Block, ...), and what it uses.

    names: the namespace the class was defined in (the notebook's), to resolve
    the names the class uses but does not define.
    """
    class_source = source_of_class(cls)
    if class_source is None:
        raise CheckError(translated(NO_SOURCE).format(name=cls.__name__, folder=problem.folder,
                                          slug=problem.slug))
    starter = _starter_source(problem)
    imports = [ast.get_source_segment(starter, node) or "" for node in ast.parse(starter).body
               if isinstance(node, ast.Import | ast.ImportFrom)]
    known = set(dir(builtins)) | _bound(ast.parse("\n".join(imports)))
    lazy = "from __future__ import annotations" in imports
    lines, bodies = list(imports), []
    unresolved: list[str] = []
    pending, seen = [class_source], {cls.__name__}
    while pending:
        source = pending.pop()
        tree = ast.parse(source)
        for name in sorted(_free(tree, lazy) - known - seen):
            seen.add(name)
            if name not in names:
                unresolved.append(name)
                continue
            line, body = _bring(name, names[name], problem.folder)
            if line is None and body is None:
                unresolved.append(name)
            if line:
                lines.append(line)
            if body:
                bodies.append(body)
                pending.append(body)
    if unresolved:
        raise CheckError(tr(
            "{name} uses {names}, which check() cannot bring from your notebook (not a "
            "module, a function or class defined there, nor a number, string or tuple of "
            "them); import or define it inside the class", name=cls.__name__,
            names=", ".join(sorted(unresolved))))
    # The grader looks the class up by the problem's name for it: Solution, or the
    # module's (Head, GroupedQueryAttention, ...).
    wanted = problem.class_name
    alias = [] if cls.__name__ == wanted else [f"\n\n{wanted} = {cls.__name__}"]
    parts = ["\n".join(dict.fromkeys(lines)), *reversed(bodies), class_source.rstrip()]
    return "\n\n\n".join(p for p in parts if p) + "".join(alias) + "\n"


def source_of_class(cls: type) -> str | None:
    """The class statement that made `cls`, or None where Python kept no source.

    `inspect.getsource` finds a class through its module's file, and a notebook's
    module has none. Its methods know where they came from, though: IPython keeps
    each cell's text in `linecache` under the file name its code was compiled
    with, so the class statement around a method's first line is the source. A
    class whose methods are all inherited is taken from the newest cell that
    defines a class of its name.
    """
    try:
        return textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        pass
    files: list[tuple[str, int | None]] = []
    for member in vars(cls).values():
        function = getattr(member, "__func__", getattr(member, "fget", member))
        code = getattr(inspect.unwrap(function), "__code__", None) \
            if callable(function) else None
        if code is not None:
            files.append((code.co_filename, code.co_firstlineno))
    if not files:
        # Every method inherited: the newest cell that defines a class of that name,
        # as running cells in order leaves it (IPython keeps cells with no mtime).
        files = [(name, None) for name, entry in reversed(linecache.cache.items())
                 if len(entry) == 4 and entry[1] is None]
    for filename, line in files:
        node, text = _class_statement(filename, cls.__name__, line)
        if node is not None:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            lines = text.splitlines(keepends=True)[first - 1:node.end_lineno]
            return textwrap.dedent("".join(lines))
    return None


def _class_statement(filename: str, name: str, line: int | None
                     ) -> tuple[ast.ClassDef | None, str]:
    """The statement of class `name` in a cached file (around `line`, if given)."""
    text = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None, text
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == name and (
                line is None or node.lineno <= line <= (node.end_lineno or 0)):
            return node, text
    return None, text


def _starter_source(problem: Problem) -> str:
    for starter in (paths.STARTERS / problem.folder / "solution.py", problem.starter):
        if starter.is_file():
            return starter.read_text(encoding="utf-8")
    return ""


def _bound(tree: ast.AST) -> set[str]:
    """Every name the code binds anywhere: assigned, imported, defined or a parameter."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def _free(tree: ast.AST, lazy_annotations: bool = False) -> set[str]:
    """The names the code reads and does not bind; with `lazy_annotations` (the file
    starts `from __future__ import annotations`), not those read only in annotations,
    which are then never evaluated (a starter's config type, imported for type
    checkers alone)."""
    skipped: set[int] = set()
    if lazy_annotations:
        for node in ast.walk(tree):
            for note in _annotations(node):
                skipped.update(id(n) for n in ast.walk(note))
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and
              isinstance(n.ctx, ast.Load) and id(n) not in skipped}
    return loaded - _bound(tree)


def _annotations(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.arg | ast.AnnAssign):
        return [node.annotation] if node.annotation is not None else []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
        return [node.returns]
    return []


def _bring(name: str, value: Any, graded: str = "") -> tuple[str | None, str | None]:
    """An import line or a definition's source that gives `name` its value.

    graded: the folder of the problem being graded. What comes from that problem's
    own solution (examples() hands a notebook its Block, MLP, ...) travels as its
    source: solution_of of the very file being graded would load itself, endlessly."""
    if isinstance(value, types.ModuleType):
        module = value.__name__
        return (f"import {module}" if module == name else f"import {module} as {name}"), None
    module_name = getattr(value, "__module__", None)
    module = sys.modules.get(module_name or "")
    file = getattr(module, "__file__", None)
    folder = Path(file).parent.name if file else ""
    if module_name and module_name.startswith("kata_solution_") and \
            PROBLEM_FOLDER.fullmatch(folder) and folder != graded:
        reused = _reused(folder, value)
        if reused is not None:
            return f"from grader.reuse import solution_of\n{name} = {reused}", None
    if _plain(value):  # a constant of the notebook's (EPS = 1e-9): written out as it is
        return f"{name} = {value!r}", None
    if inspect.isclass(value) or inspect.isfunction(value):
        if module_name and file and _installed(file) and _importable(module_name, value):
            qualname = value.__qualname__
            line = f"from {module_name} import {qualname}"
            return (line if qualname == name else f"{line} as {name}"), None
        if inspect.isclass(value):
            source = source_of_class(value)
            return None, source.rstrip() if source else None
        try:
            return None, textwrap.dedent(inspect.getsource(value)).rstrip()
        except (OSError, TypeError):
            return None, None
    return None, None


def _plain(value: Any) -> bool:
    """Whether `value` is a number, string, bytes, bool or None, or a tuple of them,
    whose repr is Python that makes it again (not nan or inf)."""
    if isinstance(value, tuple):
        return all(_plain(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or type(value) in (bool, int, str, bytes)


def _reused(folder: str, value: Any) -> str | None:
    """The expression that gives `value` again from one of the learner's own solutions,
    as the notebook took it with solution_of: the class itself, an instance of it, one
    of an instance's methods (`solution_of("rope")().apply_rope`), or one of the class's
    functions; None for anything else of that file."""
    def class_of(cls: type) -> str:
        named = "" if cls.__name__ == "Solution" else f", name={cls.__name__!r}"
        return f"solution_of({folder!r}{named})"

    if inspect.isclass(value):
        return class_of(value)
    if inspect.ismethod(value) and not inspect.isclass(value.__self__):
        return f"{class_of(type(value.__self__))}().{value.__name__}"
    if inspect.isfunction(value):
        owner, _, method = value.__qualname__.rpartition(".")
        module = sys.modules.get(value.__module__)
        cls = getattr(module, owner, None) if owner and "." not in owner else None
        return f"{class_of(cls)}.{method}" if inspect.isclass(cls) else None
    if inspect.isclass(type(value)) and type(value).__module__ == value.__module__:
        return f"{class_of(type(value))}()"  # an instance, made without arguments
    return None


def _installed(file: str) -> bool:
    """Whether a module lives with Python's own or installed packages, which the
    sandbox lets a submission import; anything else (your own files) travels as source."""
    where = Path(file).resolve()
    roots = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    return any(where.is_relative_to(Path(root).resolve()) for root in roots)


def _importable(module_name: str, value: Any) -> bool:
    try:
        module = importlib.import_module(module_name)
    except Exception:  # noqa: BLE001 - a module that cannot be imported again is not brought
        return False
    return getattr(module, value.__qualname__, None) is value


def _stage(problem: Problem, text: str, root: Path) -> Path:
    """A folder laid out like problems/: this solution, and copies of the learner's others."""
    stage = root / "problems"
    try:
        others = [f for f in paths.PROBLEMS.glob("*/solution.py")
                  if PROBLEM_FOLDER.fullmatch(f.parent.name) and f.parent.name != problem.folder]
    except OSError:
        others = []
    for other in others:
        (stage / other.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(other, stage / other.parent.name / "solution.py")
    target = stage / problem.folder / "solution.py"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def _grade(problem: Problem, text: str, verbose: bool, out: Any) -> bool:
    with tempfile.TemporaryDirectory(prefix="gpt-kata-check-") as tmp:
        file = _stage(problem, text, Path(tmp))
        out.print(tr("[bold]gpt-kata[/] grading your class for {folder}",
                     folder=problem.folder))
        if paths.in_a_copy():
            return _practise(problem, file, verbose, out)
        return _grade_in_the_sandbox(problem, file, verbose, out)


def _practise(problem: Problem, file: Path, verbose: bool, out: Any) -> bool:
    """A learners' copy holds no checks and no sandbox: its stored answers judge the
    class, in a process of its own, as the copy's `gpt-kata grade` judges a file."""
    from grader.learner.practice import practice_note, practice_report
    from grader.learner.shown import show

    report = practice_report([problem], out, files={problem: file})
    if not report.summaries:  # not practised here: practice_report said why
        return False
    show(report, out, verbose, NOTEBOOK_HINT)
    remember(report)
    out.print("[dim]" + practice_note() + "[/]", highlight=False)
    return report.status == "pass"


def _grade_in_the_sandbox(problem: Problem, file: Path, verbose: bool, out: Any) -> bool:
    from grader.importing import without_collections

    with without_collections():  # torch, pytest, hypothesis: the first time only
        from grader.grading.engine.session import grade_problems
    from grader.learner.sandbox_notice import unsandboxed
    from grader.reports.report import render
    from grader.sandbox.wire.limits import Limits

    pool = kernel_pool()
    if unsandboxed_line := unsandboxed(pool):
        out.print(f"[dim]{unsandboxed_line}[/]")
    try:
        report = grade_problems({problem: file}, pool, Limits())
    except KeyboardInterrupt:  # the cell interrupted: nothing of this grade lives on
        close_kernel_pool()
        # Said from here, not from deep in the grader, whose frames would fill the cell.
        raise KeyboardInterrupt(tr("check() stopped: the grade was interrupted")) from None
    except BaseException:
        close_kernel_pool()
        raise
    pool.end_workers()
    render(report, out, verbose=verbose, asking=NOTEBOOK_HINT)
    remember(report)
    return report.status == "pass"


# A notebook's grades are not its problems/ files' (`gpt-kata list` does not count
# them), so `gpt-kata hint` knows nothing of them: the session remembers each
# problem's last check() as status.json remembers a file's last grade, for hint().
NOTEBOOK_HINT = "hint({slug!r})"
_remembered: dict[str, dict] = {}


def remember(report: Report) -> None:
    from grader.learner.status import graded_entry

    for summary in report.summaries:
        slug = summary.problem.slug
        _remembered[slug] = graded_entry(_remembered.get(slug, {}), summary)


def hint(problem: str | int) -> None:
    """Print the next hint for `problem`, as `gpt-kata hint` does for a file: first the
    fix for the mistake this session's last check() of it named, then the statement's
    hints in order, from a nudge to the answer."""
    from rich.markup import escape

    from grader.learner.output import console
    from grader.learner.status import hint_after, hint_lines

    out = console()
    try:
        found = _problem(problem)
    except CheckError as exc:
        out.print(f"[red]✗[/] {escape(str(exc))}", highlight=False)
        return
    entry = _remembered.setdefault(found.slug, {})
    shown = hint_after(found, entry)
    for line in hint_lines(found, shown, entry.get("hints_shown", 0), NOTEBOOK_HINT):
        out.print(escape(line), highlight=False)


# One pool for the whole session (a notebook's kernel): on Linux its fork server
# imports torch and the grader's models once, so every check() after the first forks
# its worker at once instead of waiting seconds for a new server. Each grade's
# workers still end with it (on macOS and Windows each check spawns its own, as
# before: a worker kept between cells would keep whatever the learner's code left
# running); the server ends with the session (at exit, or when this process dies
# and its control socket closes).
_pool: WorkerPool | None = None
_pool_owner = 0  # the process that started it: a forked child must not share it


def kernel_pool() -> WorkerPool:
    """The session's pool, started on first use, and again if its fork server died."""
    from grader.sandbox.host.pool import WorkerPool
    from grader.sandbox.wire.limits import Limits

    global _pool, _pool_owner
    if _pool is not None and _pool_owner == os.getpid():
        if _pool.usable():
            return _pool
        _pool.close()
    _pool, _pool_owner = WorkerPool(sandbox=Limits()), os.getpid()
    _pool.start()
    return _pool


def close_kernel_pool() -> None:
    global _pool
    if _pool is not None and _pool_owner == os.getpid():
        _pool.close()
    _pool = None


atexit.register(close_kernel_pool)
