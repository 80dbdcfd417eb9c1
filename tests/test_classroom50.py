"""Classroom50: the autograder.py template an instructor puts in their config repository,
and the result.json it writes (Classroom50's `classroom50/result/v1`)."""

from __future__ import annotations

import ast
import datetime
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from test_held_in_memory import attack_for

from grader.classroom.classroom50 import to_classroom50, whole_points
from grader.registry import problems

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / ".github" / "classroom50" / "autograder.py"
RUNTIME = ROOT / ".github" / "classroom50" / "runtime.json"

# Classroom50's result.json as its documentation states it (wiki, Advanced
# Autograding, "The result.json contract"): these fields, whole numbers for points,
# each test with a name, whether it passed, and its points.
WHOLE = {"type": "integer", "minimum": 0}
RESULT_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["schema", "classroom", "assignment", "assignment_type", "owner",
                 "submission", "commit", "release", "review", "datetime", "score",
                 "max-score", "tests"],
    "properties": {
        "schema": {"const": "classroom50/result/v1"},
        "classroom": {"type": "string", "minLength": 1},
        "assignment": {"type": "string", "minLength": 1},
        "assignment_type": {"enum": ["individual", "group"]},
        "owner": {"type": "string", "minLength": 1},
        "submission": {"type": "string", "pattern": "^submit/"},
        "commit": {"type": "string", "minLength": 1},
        "release": {"type": "string", "minLength": 1},
        "review": {"type": "string", "minLength": 1},
        "datetime": {"type": "string",
                     "pattern": r"^\d{4}-\d\d-\d\dT([01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$"},
        "graded_at": {"type": "string"},
        "score": WHOLE,
        "max-score": WHOLE,
        "tests": {"type": "array", "items": {
            "type": "object",
            "required": ["test-name", "passed", "score", "max-score"],
            "properties": {"test-name": {"type": "string", "minLength": 1},
                           "passed": {"type": "boolean"}, "score": WHOLE,
                           "max-score": WHOLE}}},
    },
}
RUNNER_ENV = {"CLASSROOM": "ml-101", "ASSIGNMENT": "gpt-kata", "OWNER": "ada",
              "USERNAME": "ada", "SUBMISSION_TAG": "submit/2026-12-01T09-00-00Z-abc1234",
              "COMMIT_URL": "https://github.com/org/ml-101-gpt-kata-ada/commit/abc1234",
              "RELEASE_URL": "https://github.com/org/ml-101-gpt-kata-ada/releases/tag/x",
              "ASSIGNMENT_TYPE": "individual"}


def valid(result: dict) -> None:
    jsonschema.validate(result, RESULT_SCHEMA)
    # What the schema cannot say: the sums, and no test above its points.
    assert result["score"] == sum(t["score"] for t in result["tests"])
    assert result["max-score"] == sum(t["max-score"] for t in result["tests"])
    assert all(t["score"] <= t["max-score"] for t in result["tests"])


def report_of(statuses: dict[str, tuple[str, int, int]]) -> dict:
    """A gradebook report: problem slug -> (status, checks passed, checks)."""
    tests, entries = [], []
    for p in problems():
        status, passed, total = statuses.get(p.slug, ("missing", 0, 3))
        entries.append({"problem": p.slug, "number": p.number, "status": status,
                        "passed": passed, "total": total})
        tests += [{"name": f"{p.folder}: check {i}", "problem": p.slug,
                   "status": "pass" if i < passed else "fail",
                   "score": 1 if i < passed else 0, "max_score": 1} for i in range(total)]
    return {"problems": entries, "tests": tests}


def functions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def calls_with(node: ast.AST, word: str) -> list[ast.Call]:
    """The calls under node whose arguments hold the string `word`."""
    return [call for call in ast.walk(node) if isinstance(call, ast.Call)
            and any(isinstance(c, ast.Constant) and c.value == word for c in ast.walk(call))]


def test_the_template_installs_only_the_instructors_grader() -> None:
    tree = ast.parse(TEMPLATE.read_text(encoding="utf-8"))
    constants = {node.targets[0].id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)}
    assert constants["GRADER"].startswith("git+https://github.com/")
    assert "@" in constants["GRADER"].rsplit("/", 1)[-1]  # pinned to a tag or commit
    assert constants["TORCH"] == "torch==2.13.0"
    installs = calls_with(functions(tree)["install"], "install")
    # Two installs: torch, and GRADER; nothing else, and never a path of the checkout.
    assert len(installs) == 2
    installed = [ast.unparse(call) for call in installs]
    assert "TORCH" in installed[0] and "GRADER" in installed[1]
    assert all("checkout" not in text and "'.'" not in text and "-e" not in text
               for text in installed)
    # Every install runs from the work folder outside the checkout.
    assert all("cwd=work" in text for text in installed)


def test_the_template_grades_every_problem_from_outside_the_checkout() -> None:
    tree = ast.parse(TEMPLATE.read_text(encoding="utf-8"))
    [grade] = calls_with(functions(tree)["main"], "grader.classroom.classroom50")
    text = ast.unparse(grade)
    assert "cwd=work" in text
    # No problem is named: the grader grades every problem of its own registry.
    arguments = [c.value for c in ast.walk(grade.args[0]) if isinstance(c, ast.Constant)]
    assert arguments == ["-m", "grader.classroom.classroom50", "--submission", "--result",
                         "result.json"]


def test_the_runtime_block_pins_a_python() -> None:
    runtime = json.loads(RUNTIME.read_text(encoding="utf-8"))
    assert runtime["runs-on"] == "ubuntu-latest"
    assert runtime["python"] in ("3.10", "3.11", "3.12", "3.13")


def test_a_report_becomes_one_test_per_registry_problem() -> None:
    report = report_of({"crop-context": ("pass", 4, 4), "softmax": ("fail", 2, 5)})
    when = datetime.datetime(2026, 12, 1, 9, 30, tzinfo=datetime.timezone.utc)
    result = to_classroom50(report, RUNNER_ENV, now=when)
    valid(result)
    assert [t["test-name"] for t in result["tests"]] == [p.folder for p in problems()]
    by_name = {t["test-name"]: t for t in result["tests"]}
    assert by_name["01-crop-context"] == {**by_name["01-crop-context"], "passed": True,
                                          "score": 4, "max-score": 4}
    assert by_name["03-softmax"]["passed"] is False
    assert (by_name["03-softmax"]["score"], by_name["03-softmax"]["max-score"]) == (2, 5)
    # a missing problem scores nothing out of all its points
    assert by_name["05-decode"]["score"] == 0 and by_name["05-decode"]["max-score"] == 3
    assert result["score"] == 6
    assert result["owner"] == "ada" and result["classroom"] == "ml-101"
    assert result["datetime"] == "2026-12-01T09:30:00Z"


def test_a_problems_own_points_are_used_when_the_report_has_them() -> None:
    report = report_of({"crop-context": ("pass", 4, 4), "softmax": ("fail", 23, 24)})
    for entry in report["problems"]:
        entry["max_score"] = 10
        entry["score"] = 10 * entry["passed"] / entry["total"]
    result = to_classroom50(report, RUNNER_ENV)
    valid(result)
    by_name = {t["test-name"]: t for t in result["tests"]}
    assert (by_name["01-crop-context"]["score"], by_name["01-crop-context"]["max-score"]) == (
        10, 10)
    # 9.58 of 10 points is not a pass: 9
    assert (by_name["03-softmax"]["score"], by_name["03-softmax"]["max-score"]) == (9, 10)
    assert result["max-score"] == 10 * len(problems())


def test_points_are_whole_and_never_full_for_a_problem_not_passed() -> None:
    assert whole_points(9.6, 10, passed=False) == (9, 10)
    assert whole_points(10, 10, passed=True) == (10, 10)
    assert whole_points(2.4, 5, passed=False) == (2, 5)
    assert whole_points(0.6, 1, passed=False) == (0, 1)


@pytest.mark.parametrize("on_github", [True, False])
def test_the_template_asks_sudo_for_nothing_off_githubs_runners(
        on_github: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tried on an instructor's own machine, the template ran `sudo -n sysctl` there:
    it changes the system only on the runners Classroom50 grades on."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("classroom50_template", TEMPLATE)
    template = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(template)
    ran: list[list[str]] = []
    monkeypatch.setattr(template.subprocess, "run", lambda command, **_: ran.append(command))
    if on_github:
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
    else:
        monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    template.allow_user_namespaces()
    assert bool(ran) == on_github and all(command[0] == "sudo" for command in ran), ran


def test_the_template_grades_a_checkout(tmp_path: Path) -> None:
    checkout = tmp_path / "ml-101-gpt-kata-ada"
    for folder in ("01-crop-context", "05-decode"):
        (checkout / "problems" / folder).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / folder / "solution.py", checkout / "problems" / folder)
    # The grader's own SwiGLU, looked for in the worker's memory: none is there.
    (checkout / "problems" / "33-swiglu").mkdir(parents=True)
    (checkout / "problems" / "33-swiglu" / "solution.py").write_text(attack_for("swiglu"))
    # A grader of the learner's own in their checkout, which would give them full marks.
    fake = checkout / "grader" / "grading"
    fake.mkdir(parents=True)
    (checkout / "grader" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "classroom50.py").write_text(
        "open('result.json', 'w').write('{\"score\": 9999}')\n")
    env = {**os.environ, **RUNNER_ENV, "GPT_KATA_PYTHON": sys.executable,
           "GPT_KATA_ALLOW_UNISOLATED": "1", "RUNNER_TEMP": str(tmp_path)}
    ran = subprocess.run([sys.executable, str(TEMPLATE)], cwd=checkout, env=env,
                         capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stderr[-3000:]
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    valid(result)
    assert [t["test-name"] for t in result["tests"]] == [p.folder for p in problems()]
    passed = {t["test-name"] for t in result["tests"] if t["passed"]}
    assert passed == {"01-crop-context", "05-decode"}
    swiglu = next(t for t in result["tests"] if t["test-name"] == "33-swiglu")
    assert swiglu["score"] == 0 and not swiglu["passed"]
    assert 0 < result["score"] < result["max-score"]
    assert "score " in ran.stdout
