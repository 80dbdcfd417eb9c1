"""A worker holds only what the learner is handed, in memory as on disk.

The grader's reference models are imported only in the workers of problems that hand
the learner a model; a submission for any other problem that looks for them in the
worker's memory (sys.modules, torch.nn.Module's subclasses) finds nothing, in
classroom mode and in practice, and a worker that held them would refuse to grade.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import HOSTILE, ROOT

from grader.registry import find, problems
from grader.sandbox.worker.held import reference_code_held
from grader.sandbox.worker.machine import probe
from grader.sandbox.worker.serve import WorkerLoop

ATTACK = (HOSTILE / "reexports_reference.py").read_text(encoding="utf-8")
# Each problem the attack once got full marks on, and the grader's class (or, for rope,
# function) that it hands back.
TARGETS = {"multi-head-attention": "CausalSelfAttention", "transformer-block": "Block",
           "gpt": "GPT", "rms-norm": "RMSNorm", "rope": "apply_rope", "swiglu": "SwiGLU",
           "grouped-query-attention": "GroupedQueryAttention", "modern-gpt": "Llama"}
LINUX_SANDBOX = sys.platform.startswith("linux") and probe().landlock_abi


def attack_for(slug: str) -> str:
    problem = find(slug)
    text = ATTACK.replace('NAME = "CausalSelfAttention"', f"NAME = {TARGETS[slug]!r}")
    if problem.module is None:
        return text.replace("FUNCTION = False", "FUNCTION = True")
    return text.replace("    CLASS = reference()", f"    {problem.module} = reference()")


def test_no_problem_without_a_model_takes_one_and_modules_never_do() -> None:
    for problem in problems():
        assert not (problem.module and problem.takes_model), problem.slug
    assert {p.slug for p in problems() if p.takes_model}.isdisjoint(TARGETS)


def test_the_fork_servers_preload_holds_no_reference_code() -> None:
    # In a fresh process: this test process has imported the models itself.
    done = subprocess.run(
        [sys.executable, "-c", "from grader.sandbox.host.forkserver import preload; preload(); "
         "from grader.sandbox.worker.held import reference_code_held; "
         "print(reference_code_held())"], capture_output=True, text=True, cwd=ROOT,
        timeout=120)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_worker_handed_no_model_refuses_to_load_beside_reference_code(tmp_path) -> None:
    import grader.model.gpt  # noqa: F401 - what a regression would leave in the worker

    assert reference_code_held()
    file = tmp_path / "solution.py"
    file.write_text("class Solution:\n    pass\n", encoding="utf-8")
    reply = WorkerLoop(models=False).load(str(file), "Solution", [])
    assert "holds its reference code" in reply["error"]["message"]
    assert WorkerLoop(models=True).load(str(file), "Solution", []) == {"ok": True}


@pytest.mark.skipif(not LINUX_SANDBOX, reason="classroom mode needs Linux with Landlock")
def test_reference_classes_in_memory_cannot_be_handed_back(tmp_path: Path) -> None:
    folder = tmp_path / "problems"
    for slug in TARGETS:
        problem = find(slug)
        (folder / problem.folder).mkdir(parents=True)
        (folder / problem.folder / "solution.py").write_text(attack_for(slug), encoding="utf-8")
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", "--classroom", "-q", "--submission",
         str(folder), "--json", str(report_path), *TARGETS],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["score"] == 0, (done.stderr[-2000:], report["problems"])
    messages = "\n".join(t["message"] or "" for t in report["tests"])
    assert "is not in this worker's memory" in messages, messages[:3000]


def holds_a_model(value: object, depth: int = 0) -> bool:
    from grader.model.spec import ModelSpec

    if isinstance(value, ModelSpec):
        return True
    if depth > 8:
        return False
    if isinstance(value, (list, tuple)):
        return any(holds_a_model(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(holds_a_model(v, depth + 1) for v in value.values())
    return False


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)
def test_a_problem_takes_a_model_exactly_when_its_checks_hand_one(problem) -> None:
    """The registry's takes_model is the one place a worker's models are decided: a
    problem whose cases hold a model and that does not say so would fail for every
    learner; one that says so needlessly hands the reference's code to its worker."""
    from grader.grading.contracts.declaring import load_check_module
    from grader.release.build import contracts_of

    module = load_check_module(problem)
    contracts = contracts_of(module)
    handed = any(holds_a_model(args) for c in contracts for args in c.case_args.values())
    if problem.module is not None:
        return  # its weights are made in the grader (parts.resolved): it takes none
    assert not handed or problem.takes_model, (
        f"{problem.slug}'s cases hand the learner a model: say takes_model = true in "
        "problems/registry.toml")
    assert handed or not problem.takes_model or any(c.harness for c in contracts), (
        f"{problem.slug} says takes_model = true, and neither its cases nor a harness "
        "hand the learner a model")


@pytest.mark.parametrize("problem", problems(), ids=lambda p: p.folder)
def test_a_problem_trains_exactly_when_a_training_harness_grades_it(problem) -> None:
    """The registry's `trains` has the fork server import an optimizer's modules before
    forking the problem's worker: a problem that trains and does not say so pays for
    that import in every worker; one that says so needlessly makes its grade wait."""
    from grader.grading.contracts.declaring import load_check_module
    from grader.release.build import contracts_of
    from grader.sandbox.worker.harnesses import TRAINING

    module = load_check_module(problem)
    trains = any(c.harness in TRAINING for c in contracts_of(module))
    assert trains == problem.trains, (
        f"{problem.slug}: its checks {'do' if trains else 'do not'} train through a "
        f"harness of grader/sandbox/worker/harnesses.py's TRAINING; say trains = "
        f"{'true' if trains else 'false'} in problems/registry.toml")


def test_the_training_harnesses_exist() -> None:
    from grader.sandbox.worker import harnesses

    assert all(callable(getattr(harnesses, name, None)) for name in harnesses.TRAINING)


@pytest.mark.skipif(not LINUX_SANDBOX, reason="classroom mode needs Linux with Landlock")
def test_a_gradebook_gives_the_memory_attack_nothing(tmp_path: Path) -> None:
    """The gradebook grades each learner with `grade --classroom`: the same workers."""
    learner = tmp_path / "roster" / "mallory"
    for slug in ("swiglu", "rope"):
        problem = find(slug)
        (learner / problem.folder).mkdir(parents=True)
        (learner / problem.folder / "solution.py").write_text(attack_for(slug),
                                                               encoding="utf-8")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "grader", "gradebook", str(tmp_path / "roster"),
                           "swiglu", "rope", "--out", str(out), "-q"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    report = json.loads((out / "mallory.json").read_text(encoding="utf-8"))
    assert report["mode"] == "classroom" and report["score"] == 0, (done.stderr[-2000:],
                                                                    report["problems"])
