"""The kata's files agree with problems/registry.toml and with each other.

Every problem has a statement, a starter, a reference, a pristine snapshot of the
starter and a check module; their signatures are the same, and so is what the
check module says it grades. Everything here reads source text with `ast`: no
torch, no grading, so it can run after every edit: `python tests/test_consistency.py`
takes about a second. (Under plain `python -m pytest`, the torchtyping and hypothesis
plugins that pytest loads for the other tests import torch first, which takes longer.)

problems/ belongs to the learner once they start, so it is held only to what a
learner must keep: the signatures, and only while the file still parses. The
snapshot in data/starters is held to everything.
"""

from __future__ import annotations

import ast
import re
import textwrap
from functools import cache
from pathlib import Path

import pytest

from grader.paths import CHECKS, REGISTRY, SOLUTIONS, STARTERS
from grader.registry import Problem, problems

# The repository's own problems/, beside the registry: grader.paths.PROBLEMS is the
# learner's, found from the working directory, which may be another kata folder.
PROBLEMS = REGISTRY.parent

PROBLEMS_BY_FOLDER = pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)

# The class whose methods the registry's `methods` name, unless the problem names
# a `module` class instead; a statement shows Solution's methods bare.
SOLUTION = "Solution"
# Set up for the learner, so not left for them to write (WordStreamer's, problem 14).
WRITTEN_FOR_THE_LEARNER = {"__init__"}


def snapshot(problem: Problem) -> Path:
    return STARTERS / problem.folder / "solution.py"


def starter(problem: Problem) -> Path:
    return PROBLEMS / problem.folder / "solution.py"


def statement(problem: Problem) -> Path:
    return PROBLEMS / problem.folder / "README.md"


@cache
def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def signature(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The signature as normalised text: names, annotations, defaults, return type."""
    returns = ast.unparse(function.returns) if function.returns else ""
    return f"def {function.name}({ast.unparse(function.args)}) -> {returns}"


def methods(tree: ast.Module) -> dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef]:
    """(class, method) -> definition, for every method of every module-level class."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[(node.name, item.name)] = item
    return found


def signatures(tree: ast.Module) -> dict[tuple[str, str], str]:
    return {key: signature(function) for key, function in methods(tree).items()}


def raises_not_implemented(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    last = function.body[-1]
    if not isinstance(last, ast.Raise) or last.exc is None:
        return False
    raised = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
    return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"


def task_section(statement: str) -> str:
    """The statement's "## Your task" section, up to the next section of its level."""
    match = re.search(r"^## Your task\n(.*?)(?=^## |\Z)", statement, re.M | re.S)
    return match.group(1) if match else ""


def statement_signatures(path: Path) -> dict[tuple[str, str], str]:
    """(class, method) -> signature, for each `def` shown in the "Your task" section.

    The statement shows headers without bodies, so each is parsed with a dummy body
    added. A bare `def` is a Solution method; an indented one belongs to the
    `class` line above it in the same block.
    """
    found: dict[tuple[str, str], str] = {}
    for block in re.findall(r"^```python\n(.*?)^```", task_section(path.read_text("utf-8")),
                            re.M | re.S):
        lines = block.splitlines()
        owner = SOLUTION
        start = 0
        while start < len(lines):
            line = lines[start]
            if match := re.match(r"class (\w+)", line):
                owner = match.group(1)
            elif line.lstrip().startswith("def "):
                indented = line[0].isspace()
                # Grow the header a line at a time until it parses: headers span lines.
                for end in range(start + 1, len(lines) + 1):
                    header = textwrap.dedent("\n".join(lines[start:end]))
                    try:
                        function = ast.parse(header + "\n    ...").body[0]
                    except SyntaxError:
                        continue
                    assert isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
                    found[(owner if indented else SOLUTION, function.name)] = signature(function)
                    start = end - 1
                    break
                else:
                    pytest.fail(f"{path}: cannot read the signature that starts at {line!r}")
            start += 1
    return found


def declared_contract(tree: ast.Module) -> tuple[object, object]:
    """(problem, method or methods) a check module says it grades.

    Read from module-level `PROBLEM = ...` and `METHOD = ...` (or `METHODS`), or
    from the keywords of a module-level `Contract(problem=..., method=...)` call.
    """
    values: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Expr):
            targets, value = [], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in ("PROBLEM", "METHOD", "METHODS"):
                values[target.id.lower()] = value
        if isinstance(value, ast.Call):
            called = value.func.attr if isinstance(value.func, ast.Attribute) else (
                value.func.id if isinstance(value.func, ast.Name) else "")
            if called.endswith("Contract"):  # Contract or a kind of it (WitnessedContract)
                values.update((k.arg, k.value) for k in value.keywords
                              if k.arg in ("problem", "method", "methods"))

    def literal(key: str) -> object:
        if key not in values:
            return None
        try:
            return ast.literal_eval(values[key])
        except ValueError:
            return f"<not a literal: {ast.unparse(values[key])}>"

    return literal("problem"), literal("method") or literal("methods")


def folders(root: Path) -> set[str]:
    # Checking out a branch without a problem leaves its folders behind holding only
    # their bytecode, which git ignores: no problem's folder, and no stray either.
    return {p.name for p in root.iterdir()
            if p.is_dir() and p.name != "__pycache__" and not p.name.startswith(".")
            and any(f.is_file() and "__pycache__" not in f.relative_to(p).parts
                    for f in p.rglob("*"))}


def test_registry_is_well_formed():
    slugs = [p.slug for p in problems()]
    assert problems(), "the registry lists no problem"
    assert len(set(slugs)) == len(slugs), f"a slug appears twice: {slugs}"
    for problem in problems():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", problem.slug), problem.slug
        assert problem.methods, f"{problem.slug}: no methods"
        assert all(m.isidentifier() for m in problem.methods), problem.methods
        assert len(set(problem.methods)) == len(problem.methods), problem.methods


def test_a_tracks_problems_are_consecutive():
    """The tracks are the statements' chapters, the site's sections and the problems
    page's tables, each in the registry's order: a track may not come back after
    another has begun."""
    seen: dict[str, Problem] = {}
    previous = None
    for problem in problems():
        if problem.track != previous and problem.track in seen:
            pytest.fail(f"{problem.folder} is in the track {problem.track!r}, which ended "
                        f"before {previous!r} began: move its registry entry up among "
                        f"{problem.track!r}'s problems (renumbering the ones after it: "
                        "docs/pages/contributors/adding-a-problem.md, step 1), or give it "
                        "the track of the problems around it", pytrace=False)
        seen.setdefault(problem.track, problem)
        previous = problem.track


@PROBLEMS_BY_FOLDER
def test_every_file_of_a_problem_is_there(problem: Problem):
    expected = [statement(problem), starter(problem), problem.reference, snapshot(problem),
                problem.checks]
    missing = [str(path) for path in expected if not path.is_file()]
    assert not missing, f"{problem.folder} lacks {', '.join(missing)}"


def mistakes_file(problem: Problem) -> Path:
    """Where a problem's known mistakes are written (grader/grading/subject/mistakes_data.py)."""
    return problem.grading_folder / "mistakes.toml"


@PROBLEMS_BY_FOLDER
def test_a_check_module_reading_its_mistakes_has_their_file(problem: Problem):
    reads = any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "mistakes_of" for node in ast.walk(parse(problem.checks)))
    assert not reads or mistakes_file(problem).is_file(), (
        f"{problem.checks.name} reads its mistakes, but {mistakes_file(problem)} is missing")


def test_every_mistakes_file_belongs_to_a_problem():
    # A problem's mistakes are read from its grading folder, and the shared ones by
    # name from shared_mistakes/: a TOML file anywhere else would never be read (an
    # examples/ folder's expected.toml is the suite's, tests/test_submissions.py).
    expected = {mistakes_file(p) for p in problems()}
    found = {p for p in CHECKS.rglob("*.toml")
             if p.parent.name not in ("shared_mistakes", "examples")}
    stray = sorted(str(p.relative_to(CHECKS)) for p in found - expected)
    assert not stray, f"mistakes files of no problem, or out of its grading folder: {stray}"


@pytest.mark.parametrize("root", [PROBLEMS, SOLUTIONS, STARTERS], ids=lambda r: r.name)
def test_folders_mirror_the_registry(root: Path):
    expected = {p.folder for p in problems()}
    found = folders(root)
    assert not found - expected, f"stray folders in {root}: {sorted(found - expected)}"
    assert not expected - found, f"folders missing from {root}: {sorted(expected - found)}"


def test_every_check_module_belongs_to_a_problem():
    # Each in its problem's grading folder: one anywhere else would never be run.
    expected = {p.checks for p in problems()}
    found = set(CHECKS.rglob("check_*.py"))
    stray = sorted(str(p.relative_to(CHECKS)) for p in found - expected)
    assert not stray, f"check modules of no problem, or out of their grading folder: {stray}"


def test_a_grading_folder_is_one_problem_s():
    # The folders of grader/checks/ are the problems' and the shared mistakes': a
    # folder of no problem (a slug renamed, say) would hold files nothing reads.
    found = folders(CHECKS)
    expected = {p.grading_folder.name for p in problems()} | {"shared_mistakes"}
    assert found == expected, f"unexpected {sorted(found - expected)}, missing " \
                              f"{sorted(expected - found)}"


def test_a_folder_of_bytecode_alone_is_no_folder(tmp_path: Path):
    (tmp_path / "36-gone" / "examples" / "__pycache__").mkdir(parents=True)
    (tmp_path / "36-gone" / "examples" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"")
    (tmp_path / "01-kept" / "__pycache__").mkdir(parents=True)
    (tmp_path / "01-kept" / "solution.py").write_text("", encoding="utf-8")
    assert folders(tmp_path) == {"01-kept"}


@PROBLEMS_BY_FOLDER
def test_the_reference_has_the_registry_methods(problem: Problem):
    defined = signatures(parse(problem.reference))
    missing = [m for m in problem.methods if (problem.class_name, m) not in defined]
    assert not missing, f"{problem.reference}: class {problem.class_name} lacks {missing}"


@PROBLEMS_BY_FOLDER
def test_the_snapshot_starter_matches_the_reference(problem: Problem):
    starter, reference = signatures(parse(snapshot(problem))), signatures(parse(problem.reference))
    missing = [m for m in problem.methods if (problem.class_name, m) not in starter]
    assert not missing, f"{snapshot(problem)}: class {problem.class_name} lacks {missing}"
    for key, shown in starter.items():
        assert key in reference, f"{snapshot(problem)}: {'.'.join(key)} is not in the reference"
        assert shown == reference[key], (
            f"{'.'.join(key)}: the starter and the reference differ\n"
            f"  starter:   {shown}\n  reference: {reference[key]}")


@PROBLEMS_BY_FOLDER
def test_the_snapshot_starter_leaves_every_method_unwritten(problem: Problem):
    for (owner, name), function in methods(parse(snapshot(problem))).items():
        if name not in WRITTEN_FOR_THE_LEARNER:
            assert raises_not_implemented(function), (
                f"{snapshot(problem)}: {owner}.{name} must end with raise NotImplementedError")


@PROBLEMS_BY_FOLDER
def test_a_starter_not_yet_written_is_its_snapshot(problem: Problem):
    """The snapshot is what `gpt-kata reset` and the learners' copy hand out: a starter
    changed in problems/ (14's docstring once) must be snapshotted again. A learner's
    file with code of theirs in it, or changes not committed, is not compared."""
    import subprocess

    file = starter(problem)
    unwritten = all(raises_not_implemented(function) for (owner, name), function
                    in methods(parse(file)).items() if name not in WRITTEN_FOR_THE_LEARNER)
    committed = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", file.name],
                               cwd=file.parent, capture_output=True).returncode == 0
    if not (unwritten and committed):
        pytest.skip(f"{file} holds code or changes of its own")
    assert file.read_bytes() == snapshot(problem).read_bytes(), (
        f"{snapshot(problem)} is not {file}: run `python -m grader.maintainer.make_data "
        "starters` (or, if you changed this starter yourself, `gpt-kata reset` puts it back)")


@PROBLEMS_BY_FOLDER
def test_the_statement_shows_the_reference_signatures(problem: Problem):
    shown = statement_signatures(statement(problem))
    reference = signatures(parse(problem.reference))
    missing = [m for m in problem.methods if (problem.class_name, m) not in shown]
    assert not missing, f"{statement(problem)}: the 'Your task' section does not show {missing}"
    for key, text in shown.items():
        assert key in reference, f"{statement(problem)} shows {'.'.join(key)}, not in the reference"
        assert text == reference[key], (
            f"{statement(problem)}: {'.'.join(key)} differs from the reference\n"
            f"  statement: {text}\n  reference: {reference[key]}")


@PROBLEMS_BY_FOLDER
def test_the_check_module_declares_the_registry_entry(problem: Problem):
    # A contract's problem is derived from its file's name unless declared; which
    # methods its contracts grade is validated when the module is collected
    # (grader/grading/contracts/contract_validation.py, and test_contract for every module).
    declared_problem, _ = declared_contract(parse(problem.checks))
    assert declared_problem in (None, problem.slug), (
        f"{problem.checks} declares problem {declared_problem!r}, not {problem.slug!r}")


if __name__ == "__main__":
    import sys

    # The quick check: in this process (-n 0: starting workers takes longer than the
    # tests), without the two plugins that import torch and hypothesis, which
    # nothing here uses.
    sys.exit(pytest.main([__file__, "-q", "-n", "0", "-p", "no:torchtyping",
                          "-p", "no:hypothesispytest", *sys.argv[1:]]))
