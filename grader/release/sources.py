"""Practice modules written from the full grader's own source, so that there is one source.

The practice grader loads known weights into a learner's module as the full
grader does and says the same when the parameters do not fit. Rather than a copy
kept alike by hand, the release writes its weights.py from the definitions in
grader/model/parts.py that do it, taken out of that file's text as they are
(comments included), under a header of the copy's own.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from grader.model import parts

# The grader's modules parts.py imports that the copy holds too (release/build.py's
# RUNTIME_FILES): the copy's weights.py imports from them what its definitions use.
COPY_HOLDS = ("grader.locale",)
# What the practice grade takes from parts.py (with what of parts.py they use): none
# of it builds a model, the answer to any problem.
KNOWN_WEIGHTS = ("KnownWeightsError", "ParameterNamesError", "load_known_weights")

WEIGHTS_HEADER = '''"""Loading a problem's known weights into your module, by its statement's names.

Written by `gpt-kata release` from the instructor's grader (grader/model/parts.py),
so that a module whose parameters do not fit is told the same here as there.
"""

from __future__ import annotations

import torch
'''


class SourceError(Exception):
    """A definition the practice grader needs is no longer where the release takes it."""


def top_level(tree: ast.Module) -> dict[str, ast.stmt]:
    """The module's top-level functions, classes and names assigned, by name."""
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = node
    return found


def local_names(node: ast.stmt) -> set[str]:
    """The names a function binds for itself (its parameters, what it assigns), which
    are not the module's even where the module has one of the same name."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    found = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    found |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)}
    return found


def needed(tree: ast.Module, wanted: tuple[str, ...]) -> list[str]:
    """`wanted` and every top-level name of the module they use, and those use, ..."""
    defined = top_level(tree)
    todo, seen = list(wanted), list(wanted)
    while todo:
        node = defined.get(todo.pop())
        if node is None:
            continue
        own = local_names(node)
        for used in ast.walk(node):
            if (isinstance(used, ast.Name) and used.id in defined and used.id not in own
                    and used.id not in seen):
                seen.append(used.id)
                todo.append(used.id)
    return seen


def definitions(path: Path, wanted: tuple[str, ...]) -> str:
    """The top-level definitions of `wanted` in `path`, and of the module's names they
    use, each with the comment lines right above it, in the file's order, two blank
    lines apart."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    defined = top_level(tree)
    missing = [name for name in wanted if name not in defined]
    if missing:
        raise SourceError(f"{path} no longer defines {', '.join(missing)} at its top level, "
                          "which the learners' copy is written from")
    taken = set(needed(tree, wanted))
    parts = []
    for name, node in defined.items():
        if name not in taken:
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1  # the comment that says why belongs with it
        parts.append("".join(lines[first:node.end_lineno]).rstrip("\n") + "\n")
    return "\n\n".join(parts)


HARNESSES_HEADER = '''"""The drivers of the problems whose code is not one method call.

Written by `gpt-kata release` from the instructor's grader (grader/sandbox/worker/harnesses.py),
so that your code is called here as it is there.
"""

from __future__ import annotations
'''


def harness_source(names: list[str]) -> str:
    """The drivers "harness:<name>" of `names`, from the grader's own source, with
    what of their module they use; a SourceError for one that needs the grader (a
    model it builds, say), which the copy does not hold."""
    from grader.sandbox.worker import harnesses

    by_file: dict[Path, list[str]] = {}
    for name in names:
        function = getattr(harnesses, name, None)
        if function is None:
            raise SourceError(f"there is no harness {name!r}")
        by_file.setdefault(Path(inspect.getsourcefile(function) or ""), []).append(name)
    code = [with_copys_own(definitions(path, tuple(wanted)))
            for path, wanted in sorted(by_file.items())]
    for node in ast.walk(ast.parse("\n".join(code))):
        modules = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                   else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        if any(m == "grader" or m.startswith("grader.") for m in modules):
            raise SourceError(f"harness {', '.join(names)} imports the grader's own code")
    return "\n\n".join(code)


# What of the grader a driver may import that the copy has a module of its own for,
# which answers no problem: a trainable GPT, built from its exported program
# (gpt_kata_practice/training.py) rather than from the grader's GPT class.
COPYS_OWN = {("grader.model.artifacts", "trainable_model"): "gpt_kata_practice.training"}


def with_copys_own(code: str) -> str:
    """`code` with each import of the grader that COPYS_OWN stands in for made an
    import of the copy's own module; any other import of the grader is left, for
    harness_source to refuse."""
    lines = code.splitlines(keepends=True)
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.ImportFrom) or node.lineno != node.end_lineno:
            continue
        own = {COPYS_OWN.get((node.module or "", a.name)) for a in node.names}
        if len(own) != 1 or None in own or any(a.asname for a in node.names):
            continue
        line = lines[node.lineno - 1]
        start = line[:node.col_offset] + f"from {own.pop()} import "
        lines[node.lineno - 1] = (start + ", ".join(a.name for a in node.names)
                                  + line[node.end_col_offset:])
    return "".join(lines)


def harnesses_module(names: list[str]) -> bytes:
    """The copy's gpt_kata_practice/harnesses.py: the drivers of `names`."""
    body = harness_source(sorted(names)) if names else ""
    return (HARNESSES_HEADER + (f"\n\n{body}" if body else "")).encode()


def weights_module() -> bytes:
    """The copy's gpt_kata_practice/weights.py: with parts.py's imports of the grader's
    modules the copy holds (grader.locale) that its definitions use."""
    path = Path(parts.__file__)
    body = definitions(path, KNOWN_WEIGHTS)
    used = {n.id for n in ast.walk(ast.parse(body)) if isinstance(n, ast.Name)}
    imports = "".join(
        f"from {node.module} import {', '.join(names)}\n"
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ImportFrom) and node.module in COPY_HOLDS
        for names in [[a.name for a in node.names if a.name in used]] if names)
    return f"{WEIGHTS_HEADER}\n{imports}\n\n{body}".encode()
