"""The grader's floors: no import runs up them, none makes a cycle (lazy imports
counted), and no folder of grader/ outgrows what one reader keeps in mind."""

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


def grader_files() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def import_graph() -> dict[str, set[str]]:
    # The check modules too: pytest loads them by path, but what they import is
    # held to their floor like any module's.
    files = {module_name(p): p for p in grader_files()}
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


# The floors, bottom first. A module's floor is that of the longest name here it is
# under ("grader" itself only by its own name); it may import its own folder and the
# floors beneath it, never one above. The ground is what everything stands on; the
# sandbox's wire is what crosses between grader and worker, and the worker never
# imports the grader's side of it (host); grading climbs from values to the engine,
# with the reports beneath the engine that fills them; the check modules plug into
# the engine (it runs them by path) and stand on what grading offers; the learner's
# commands, their tools, the classroom and the release stand on all of that; the
# CLI wires them; the package's face (`from grader import check`, `python -m grader`)
# is on top.
FLOORS = {
    "grader.locale": 0, "grader.paths": 0, "grader.registry": 0, "grader.reuse": 0,
    "grader.wording": 0, "grader.importing": 0,
    "grader.model": 1,
    "grader.play": 2,
    "grader.sandbox.wire": 3,
    "grader.sandbox.worker.layers": 4,
    "grader.sandbox.worker": 5,
    "grader.sandbox": 6, "grader.sandbox.host": 6,
    "grader.grading.values": 7,
    "grader.grading.subject": 8,
    "grader.grading.judging": 9,
    "grader.grading.contracts": 10,
    "grader.reports": 11,
    "grader.grading": 12, "grader.grading.engine": 12,
    "grader.checks": 13,
    "grader.maintainer": 14, "grader.release.practice": 14,
    "grader.learner": 15,
    "grader.learner.tools": 16,
    "grader.learner.training": 17,  # it uses talk's helpers (tools)
    "grader.classroom.gradebook": 17,
    "grader.classroom": 18, "grader.release": 18,
    "grader.cli": 19,
    "grader": 20, "grader.__main__": 20,
}
# A folder of grader/ holds at most this many .py files: past it, it has more than
# one job, and gets a folder per job.
MOST_FILES_IN_A_FOLDER = 15


def under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def floor_name(module: str) -> str | None:
    """The name in FLOORS that gives the module its floor, or None if none does."""
    if module == "grader":
        return "grader"
    names = [name for name in FLOORS if name != "grader" and under(module, name)]
    return max(names, key=len) if names else None


def floor_of(module: str) -> int:
    name = floor_name(module)
    assert name is not None, f"{module} is on no floor: add it to FLOORS"
    return FLOORS[name]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import of a module on a higher floor than the importer's, as text."""
    return [f"{module} (floor {floor_of(module)}) imports {i} (floor {floor_of(i)})"
            for module, imported in sorted(graph.items())
            for i in sorted(imported) if floor_of(i) > floor_of(module)]


def test_every_module_is_on_a_floor() -> None:
    lost = sorted(m for m in import_graph() if floor_name(m) is None)
    assert not lost, f"modules on no floor (add them to FLOORS): {lost}"


def test_no_import_runs_up_a_floor() -> None:
    up = upward_imports(import_graph())
    assert not up, "imports that run up the floors:\n" + "\n".join(up)


def test_an_import_up_a_floor_is_found() -> None:
    assert upward_imports({"grader.model.gpt": {"grader.cli.main"}}) == [
        "grader.model.gpt (floor 1) imports grader.cli.main (floor 19)"]
    assert upward_imports({"grader.sandbox.worker.serve": {"grader.sandbox.host.witness"}})
    assert upward_imports({"grader.reports.report": {"grader.grading.engine.session"}})
    assert not upward_imports({"grader.cli.main": {"grader.model.gpt", "grader.cli"}})


def test_folders_on_one_floor_import_nothing_of_each_other() -> None:
    # Beside each other, not one above the other: maintainer/ and release/practice/,
    # classroom/ and release/. The ground's modules are one floor of single files.
    def folder(module: str) -> str:
        return "the ground" if floor_of(module) == 0 else str(floor_name(module))

    across = sorted(f"{module} imports {i}" for module, imported in import_graph().items()
                    for i in imported if floor_of(i) == floor_of(module)
                    and folder(i) != folder(module))
    assert not across, "imports across folders of one floor:\n" + "\n".join(across)


def test_a_floor_is_kept_by_the_graph_as_written() -> None:
    # The model's description lives on the model's floor; the wire carries it.
    graph = import_graph()
    assert "grader.model.spec" in graph["grader.sandbox.wire.encoding"]
    assert not any(under(i, "grader.sandbox") for i in graph["grader.model.parts"])
    # The worker's stand-in model is the worker's own: the witness, on the host's
    # side, stands on it, not the other way round.
    assert "grader.sandbox.worker.remote_model" in graph["grader.sandbox.host.witness"]


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    counts: dict[Path, int] = {}
    for path in grader_files():
        counts[path.parent] = counts.get(path.parent, 0) + 1
    crowded = sorted(f"{folder.relative_to(PACKAGE.parent)}: {n}"
                     for folder, n in counts.items() if n > MOST_FILES_IN_A_FOLDER)
    assert not crowded, (f"folders over {MOST_FILES_IN_A_FOLDER} .py files (split them by "
                         f"job): {crowded}")
