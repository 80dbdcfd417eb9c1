"""What a learner's file says it calls, read without running it: the checks that a
problem's code is written by hand. Read from the file as Python reads it, in the
grader's process, by the kata's checks and by a learners' copy's practice grade alike.

`SOURCE_CHECKS` names each problem's: the check's name, as reports show it, and the
function that returns a learner's message for the file, or "" where it passes.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Callable
from pathlib import Path

from grader.locale import tr

BUILT_INS = {"softmax", "log_softmax", "softmin"}
# A library's softmax as a class (torch.nn.Softmax, torch.distributions.Categorical's
# probs): counted where it is reached through a module or imported, so that a learner's
# own class of that name is not.
LIBRARY_CLASSES = {"Softmax", "LogSoftmax", "Softmin", "distributions"}
# Ways to reach a library softmax by a name made as the code runs, or through code this
# check cannot read (another problem's file, loaded by solution_of or by path): no
# honest softmax of exp, max and sum needs them.
DYNAMIC_LOOKUPS = {"getattr", "__getattribute__", "__dict__", "vars", "eval", "exec",
                   "compile", "__import__", "import_module", "globals", "locals",
                   "attrgetter", "methodcaller", "locate", "modules", "solution_of",
                   "spec_from_file_location", "run_path", "exec_module", "load_module",
                   "loads", "getmembers", "__bases__", "_getframe", "currentframe",
                   "f_globals", "f_locals", "__globals__", "__builtins__"}
# A string that is a dotted name ("torch.softmax"), not prose that mentions softmax.
DOTTED_NAME = re.compile(r"[A-Za-z_][\w.]*")
# More than any softmax needs; the source is read in the grader, outside the sandbox.
MAX_SOURCE_BYTES = 1 << 20


def library_softmax(path: Path) -> str:
    """Where the file calls a library softmax, or looks a name up at run time (where
    the grader cannot see what it calls), as a learner's message; "" if nowhere.

    The file is read as Python reads it (its coding line, a BOM), and a file that cannot
    be read or parsed here fails: the worker loaded it, so it is valid Python to the
    grader's interpreter too, and a check that could not look has not passed.
    """
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_SOURCE_BYTES + 1)
        unread = tr("larger than {mb} MB", mb=MAX_SOURCE_BYTES >> 20) if (
            len(raw) > MAX_SOURCE_BYTES) else ""
        source = "" if unread else importlib.util.decode_source(raw)
        tree = None if unread else ast.parse(source)
    except UnicodeDecodeError as error:
        # Python's import lets a byte it cannot decode pass in a comment; `python` on
        # the file does not.
        line = raw[:error.start].count(b"\n") + 1
        return tr("{file} is not UTF-8 text: line {line} holds the byte {byte}, which Python "
                  "itself refuses when it runs the file; save it as UTF-8", file=path.name,
                  line=line, byte=f"0x{raw[error.start]:02x}")
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as error:
        unread = type(error).__name__
    if unread:
        return tr("{file} could not be read to check that softmax is written by hand: "
                  "{error}", file=path.name, error=unread)
    for node in graded_nodes(tree, source):
        classes: list[str] = []
        if isinstance(node, ast.Attribute):
            # Any object's softmax, the learner's own class's too: what an attribute
            # reaches depends on what the object is as the code runs.
            names = classes = [node.attr]
        elif isinstance(node, ast.MatchClass):  # case object(softmax=f): an attribute
            names = classes = list(node.kwd_attrs)
        elif isinstance(node, ast.Name):
            # A bare name is bound in the file (a star import aside, below): by an
            # import, whose alias is read, or by code whose right-hand side is. So a
            # variable or a function the learner named softmax is their own; getattr
            # and the like are Python's own, and looked for.
            names = [] if node.id in BUILT_INS else [node.id]
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return tr("{file}:{line} imports * from {module}, which can bring in a library "
                      "softmax under its own name; import the names you use",
                      file=path.name, line=node.lineno, module=node.module or ".")
        elif isinstance(node, ast.alias):  # from torch import softmax as s
            names = classes = [*node.name.split("."), node.asname or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # A name to look up: "softmax", "torch.nn.functional.softmax".
            names = node.value.split(".") if DOTTED_NAME.fullmatch(node.value) else []
        elif isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            # Code or a pickle held as bytes names what it calls inside them.
            names = [name for name in BUILT_INS if name.encode() in node.value]
        else:
            continue
        line = getattr(node, "lineno", "?")
        if used := BUILT_INS.intersection(names) | LIBRARY_CLASSES.intersection(classes):
            return tr("{file}:{line} uses {name}; this problem is to write softmax yourself "
                      "with exp, max and sum", file=path.name, line=line, name=min(used))
        if looked_up := DYNAMIC_LOOKUPS.intersection(names):
            return tr("{file}:{line} uses {name}, which looks a name up as the code runs; "
                      "this problem is to write softmax yourself with exp, max and sum, in "
                      "code the grader can read", file=path.name, line=line,
                      name=min(looked_up))
    return ""


def graded_nodes(tree: ast.Module, source: str) -> list[ast.AST]:
    """Every node of the file but the body of a top-level `if __name__ == "__main__":`,
    which an import never runs (a learner's try-out, comparing with torch.softmax,
    say). Only where the file names `__name__` nowhere else: anything that could make
    the block run on import (binding the name, importing it, capturing it in a
    pattern) names it, or looks it up in a way that is refused anyway."""
    tests = [statement for statement in tree.body
             if isinstance(statement, ast.If) and is_main_test(statement.test)]
    skipped: set[int] = set()
    if tests and source.count("__name__") == len(tests):
        skipped = {id(node) for statement in tests for part in statement.body
                   for node in ast.walk(part)}
    return [node for node in ast.walk(tree) if id(node) not in skipped]


def is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return (any(isinstance(side, ast.Name) and side.id == "__name__" for side in sides)
            and any(isinstance(side, ast.Constant) and side.value == "__main__"
                    for side in sides))


# Each problem's checks of its file's text, by slug.
SOURCE_CHECKS: dict[str, list[tuple[str, Callable[[Path], str]]]] = {
    "softmax": [("Written by hand, without a library softmax", library_softmax)],
}
