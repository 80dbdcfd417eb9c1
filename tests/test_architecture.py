"""The grader's layers: no import cycles among its modules, lazy imports counted."""

from __future__ import annotations

import ast
from pathlib import Path

import grader

PACKAGE = Path(grader.__file__).resolve().parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, known: set[str]) -> set[str]:
    """Grader modules this file imports anywhere in it, inside functions too."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from grader.x import y` may name a module y or a name in x; when every
            # name is a module (`from grader import paths`), x itself is not used.
            inner = [f"{node.module}.{alias.name}" for alias in node.names]
            names = inner if all(n in known for n in inner) else [node.module, *inner]
        else:
            continue
        found |= {name for name in names if name in known}
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py") if "checks" not in p.parts}
    known = set(files)
    graph = {name: imports_of(path, known) - {name} for name, path in files.items()}
    # Importing a.b.c runs a/__init__ and a/b/__init__ first; those are not edges
    # of the design, so package __init__ files that import nothing stay leaves.
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_graph_sees_lazy_imports() -> None:
    graph = import_graph()
    # grader.learner.grade imports the grading session only inside grade_with().
    assert "grader.grading.engine.session" in graph["grader.learner.grade"]


def test_no_import_cycles_among_grader_modules() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# The floors kept so far, each with what it may import: its own modules and the
# floors beneath it. The model (GPT, Llama, their parts, the shipped files and the
# description of a model that crosses the worker protocol) stands on the paths
# alone; the sandbox, grading, checks and commands all stand on it.
FLOORS = {
    "grader.model": ("grader.model", "grader.paths"),
}


def under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_import_runs_up_a_floor() -> None:
    graph = import_graph()
    for floor, allowed in FLOORS.items():
        for module, imported in sorted(graph.items()):
            if not under(module, floor):
                continue
            up = sorted(i for i in imported if not any(under(i, a) for a in allowed))
            assert not up, f"{module} imports {up}, above the floor of {floor}"


def test_a_floor_is_kept_by_the_graph_as_written() -> None:
    # The model's description lives on the model's floor; the protocol carries it.
    graph = import_graph()
    assert "grader.model.spec" in graph["grader.sandbox.wire.encoding"]
    assert not any(under(i, "grader.sandbox") for i in graph["grader.model.parts"])
