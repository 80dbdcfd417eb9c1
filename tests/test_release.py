"""The learners' copy (`gpt-kata release`): reproducible, free of reference code, and its
practice grader fails the starters, passes the references and names known mistakes."""

from __future__ import annotations

import ast
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBMISSIONS
from patches import apply

from grader import paths
from grader.registry import problems
from grader.release.build import PACKAGE, write_release

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

# Code whose definitions are answers: the references, the grader's own GPT (problem
# 23's answer), the knobbed computations that name mistakes, and the check modules,
# which hold the mistakes' runs and the judges (a judge can compute the answer).
REFERENCE_CODE = sorted(
    [*paths.SOLUTIONS.glob("*/solution.py"),
     paths.PACKAGE / "model" / "gpt.py",
     paths.PACKAGE / "grading" / "transformer.py",
     paths.PACKAGE / "grading" / "mistakes.py",
     paths.PACKAGE / "grading" / "judges.py",
     *paths.CHECKS.glob("check_*.py")])
# Rules of judging that the practice grader states again on purpose: they say how
# close is close enough, not what the answer is.
SHIPPED_RULES = {"activation_atol"}
# A statement this short (`return x`, `x = x.clone()`) is no one's answer.
SHORTEST_STATEMENT = 40


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    write_release(first)
    write_release(second)
    return first, second


def digests(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def test_two_releases_are_the_same_byte_for_byte(copies: tuple[Path, Path]) -> None:
    first, second = copies
    assert digests(first) == digests(second)
    assert f"{PACKAGE}/cases.json" in digests(first)


def test_the_copy_holds_statements_starters_and_data(copies: tuple[Path, Path]) -> None:
    copy = copies[0]
    for problem in problems():
        folder = copy / "problems" / problem.folder
        assert (folder / "README.md").read_bytes() == (
            paths.ROOT / "problems" / problem.folder / "README.md").read_bytes()
        assert (folder / "solution.py").read_bytes() == (
            paths.STARTERS / problem.folder / "solution.py").read_bytes()
    for name in ("corpus.txt", "vocab.json", "config.json", "model.safetensors"):
        assert (copy / "data" / name).read_bytes() == (paths.DATA / name).read_bytes()
    assert "practice grade" in (copy / "README.md").read_text(encoding="utf-8")


def test_no_file_of_the_references_is_in_the_copy(copies: tuple[Path, Path]) -> None:
    copy = copies[0]
    answers = {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in REFERENCE_CODE}
    for relative, digest in digests(copy).items():
        assert digest not in answers, f"{relative} is {answers[digest]}"
        assert "solutions" not in relative.split("/")
        # Only text: no pickles, TorchScript or exported programs that could carry code.
        assert Path(relative).suffix in {".md", ".py", ".toml", ".json", ".txt", ".safetensors",
                                         ".pt2"}


def test_the_shipped_model_is_an_exported_program_without_source(
        copies: tuple[Path, Path]) -> None:
    import zipfile

    program = copies[0] / PACKAGE / "models" / "shipped.pt2"
    with zipfile.ZipFile(program) as archive:
        held = b"".join(archive.read(name) for name in archive.namelist())
    assert b"aten" in held  # torch operations, not Python
    source = (paths.PACKAGE / "model" / "gpt.py").read_text(encoding="utf-8")
    lines = {line.strip() for line in source.splitlines() if len(line.strip()) >= 20}
    for forbidden in (b"gpt.py", b"stack_trace", str(paths.ROOT).encode(),
                      *(line.encode() for line in lines)):
        assert forbidden not in held, forbidden


def statements(source: str, skip: frozenset[str] = frozenset()) -> set[str]:
    """Every statement in a function body, but docstrings and short ones, normalised
    (the AST without positions, so layout, comments and quotes do not hide it), and
    none of the functions named in `skip`."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name in skip:
            continue
        for statement in ast.walk(node):
            if not isinstance(statement, ast.stmt) or isinstance(
                    statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                continue  # a docstring
            text = ast.unparse(statement)
            if len(text) >= SHORTEST_STATEMENT:
                found.add(ast.dump(statement))
    return found


def test_no_statement_of_the_reference_code_is_in_the_copy(copies: tuple[Path, Path]) -> None:
    """A statement of an answer's body may be in the copy only where a starter gives it
    away already (a starter's seeded generator, say)."""
    copy = copies[0]
    given = set().union(*(statements((paths.STARTERS / p.folder / "solution.py").read_text(
        encoding="utf-8")) for p in problems()))
    answers = {}
    for path in REFERENCE_CODE:
        code = path.read_text(encoding="utf-8")
        for statement in statements(code, frozenset(SHIPPED_RULES)) - given:
            answers.setdefault(statement, path)
    assert len(answers) > 500  # the standard has something to compare with
    for path in sorted(copy.rglob("*.py")):
        leaked = statements(path.read_text(encoding="utf-8")) & answers.keys()
        assert not leaked, (f"{path.relative_to(copy)} holds code of "
                            f"{sorted({str(answers[s]) for s in leaked})}")


def practice_grade(copy: Path, *names: str) -> subprocess.CompletedProcess[str]:
    """The copy's grader, run as a learner runs it, with the kata's own grader out of reach."""
    code = ("import sys; sys.modules['grader'] = None; sys.path.insert(0, '.'); "
            "from gpt_kata_practice.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-I", "-c", code, "grade", *names], cwd=copy,
                          capture_output=True, text=True, encoding="utf-8", check=False)


def practised(copy: Path) -> list[str]:
    import json

    return list(json.loads((copy / PACKAGE / "cases.json").read_text("utf-8"))["problems"])


def test_the_starters_fail_as_not_implemented(copies: tuple[Path, Path]) -> None:
    copy = copies[0]
    graded = practice_grade(copy)
    assert graded.returncode == 1, graded.stderr
    lines = graded.stdout.splitlines()
    by_slug = {p.slug: p for p in problems()}
    assert len(practised(copy)) >= 15
    for slug in practised(copy):
        line = next(x for x in lines if f" {by_slug[slug].folder}:" in x)
        assert "not implemented yet" in line, line
    assert "practice grade" in graded.stdout


def test_the_references_copied_in_pass(copies: tuple[Path, Path], tmp_path: Path) -> None:
    copy = tmp_path / "learner"
    shutil.copytree(copies[0], copy)
    for problem in problems():
        shutil.copyfile(problem.reference, copy / "problems" / problem.folder / "solution.py")
    graded = practice_grade(copy)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    by_slug = {p.slug: p for p in problems()}
    for slug in practised(copy):
        assert any(line.startswith(f"  ✓ {by_slug[slug].folder}:")
                   for line in graded.stdout.splitlines()), graded.stdout


def submissions() -> list[Path]:
    return sorted(p for p in SUBMISSIONS.iterdir() if (p / "expected.toml").is_file())


@pytest.fixture(scope="module")
def practice(copies: tuple[Path, Path]):  # noqa: ANN201 - the copy's own module
    sys.path.insert(0, str(copies[0]))
    try:
        from gpt_kata_practice import grade

        yield grade
    finally:
        sys.path.remove(str(copies[0]))


@pytest.mark.parametrize("folder", submissions(), ids=lambda p: p.name)
def test_styles_pass_and_mistakes_are_named(folder: Path, practice, tmp_path: Path) -> None:  # noqa: ANN001
    """Every equivalent style passes the practice checks, and of the mistakes that fail
    them, at least one is named as the instructor's grade names it."""
    spec = tomllib.loads((folder / "expected.toml").read_text(encoding="utf-8"))
    if spec["problem"] not in practice.stored()["problems"]:
        pytest.skip(f"{spec['problem']} has no practice cases")
    base = (folder / spec["base"]).read_text(encoding="utf-8") if "base" in spec else ""
    for name, style in spec.get("equivalent", {}).items():
        path = folder / name
        if isinstance(style, dict):  # a patch of the base
            path = tmp_path / name
            path.write_text(apply(style["patch"], base), encoding="utf-8")
        result = practice.grade_problem(spec["problem"], path)
        assert result.ok, (name, result.unavailable, result.failures)
    named, failed = [], []
    for name, mistake in spec.get("mistakes", {}).items():
        text = ((folder / mistake["file"]).read_text(encoding="utf-8") if "file" in mistake
                else apply(mistake["patch"], base))
        path = tmp_path / f"{name}.py"
        path.write_text(text, encoding="utf-8")
        result = practice.grade_problem(spec["problem"], path)
        if result.ok:
            continue  # a mistake the fixed cases cannot show (a refusal, a generator's state)
        failed.append(name)
        report = "\n".join(result.failures) + result.unavailable
        says = mistake["says"] if isinstance(mistake["says"], list) else [mistake["says"]]
        if all(s in report for s in says):
            named.append(name)
    if spec["problem"] == "sample":
        # sample's mistakes draw from the wrong generator: their stored answers are
        # draws the learner's run does not repeat, so they fail unnamed.
        assert failed and not named
    else:
        assert named, f"none of {failed} is named"
