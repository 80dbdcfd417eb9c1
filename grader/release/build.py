"""Write the learners' copy: statements, starters, data, and a practice grader, no answers.

What is copied is listed here, file by file; nothing is copied by walking a
folder, so no reference code can slip in with a new file. The practice cases
are made from the check modules the instructor's grade runs: each fixed case's
arguments, its golden (the reference's answer) and the answer of each known
mistake that differs from it. Every file is written from sorted, fixed data, so
two releases of one commit are the same byte for byte.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from grader import paths
from grader.registry import Problem, problems

PRACTICE_SOURCE = Path(__file__).with_name("practice")
TEMPLATES = Path(__file__).with_name("templates")
PACKAGE = "gpt_kata_practice"
# The data a learner's code and the statements use. Not goldens.json nor
# manifest.json: the practice cases carry what is needed of the goldens.
DATA_FILES = ("corpus.txt", "vocab.json", "config.json", "model.safetensors")
PRACTICE_FILES = ("__init__.py", "__main__.py", "cli.py", "codec.py", "grade.py", "judge.py",
                  "weights.py")

NO_GOLDENS = "its results are judged against the live reference only (no stored answers)"
WITNESSED = "its checks judge how your code calls the model, which stored answers cannot show"
HARNESS = "its checks drive your code with the grader's own training loop"
NEEDS_MODEL = ("some of its cases run a model other than the shipped GPT (a seeded random one, "
               "say), which this copy does not hold yet")


class ReleaseError(Exception):
    """The copy cannot be written where asked."""


def write_release(out: Path) -> list[Path]:
    """Write the learners' copy into `out` (new or empty); the files written, sorted."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ReleaseError(f"{out} is not an empty folder: the copy is written afresh")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def read(path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise ReleaseError(f"{path} is missing: every problem in the registry needs its "
                               "statement and starter before a release") from None

    def put(relative: str, data: bytes) -> None:
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(target)

    put("README.md", (TEMPLATES / "README.md").read_bytes())
    put("pyproject.toml", (TEMPLATES / "pyproject.toml").read_bytes())
    put("problems/registry.toml", paths.REGISTRY.read_bytes())
    for problem in problems():
        put(f"problems/{problem.folder}/README.md",
            read(paths.ROOT / "problems" / problem.folder / "README.md"))
        put(f"problems/{problem.folder}/solution.py",
            read(paths.STARTERS / problem.folder / "solution.py"))
    for name in DATA_FILES:
        put(f"data/{name}", (paths.DATA / name).read_bytes())
    for name in PRACTICE_FILES:
        put(f"{PACKAGE}/{name}", (PRACTICE_SOURCE / name).read_bytes())
    put(f"{PACKAGE}/cases.json", practice_cases_json().encode("utf-8"))
    put(f"{PACKAGE}/model.pt2", exported_model())
    return sorted(written)


def practice_cases_json() -> str:
    cases = practice_cases()
    return json.dumps(cases, ensure_ascii=True, separators=(",", ":"), allow_nan=True) + "\n"


def practice_cases() -> dict[str, Any]:
    """Every problem's stored cases, or why it has none, in the registry's order."""
    practised: dict[str, Any] = {}
    not_practised: dict[str, str] = {}
    for problem in problems():
        try:
            practised[problem.slug] = problem_cases(problem)
        except NotPractised as why:
            not_practised[problem.slug] = str(why)
    from grader.model import artifacts

    return {"problems": practised, "not_practised": not_practised,
            "model": {"context_length": artifacts.shipped_model().context_length}}


class NotPractised(Exception):
    """A problem whose fixed cases this copy cannot judge; the message says why."""


def problem_cases(problem: Problem) -> dict[str, Any]:
    import torch

    from grader.grading.contract import Contract
    from grader.grading.judges import same_filtering
    from grader.grading.skeleton import fresh_args, load_reference, outcome_of, same_outcome
    from grader.model import artifacts

    # The practice package's codec and judge, as the copy will run them.
    from grader.release.practice import codec, judge
    from grader.sandbox.protocol import decode

    module = importlib.import_module(f"grader.checks.{problem.checks.stem}")
    contract = module.CONTRACT
    assert isinstance(contract, Contract)
    if not contract.goldens:
        raise NotPractised(NO_GOLDENS)
    if contract.harness:
        raise NotPractised(HARNESS)
    if contract.witness_model_calls:
        raise NotPractised(WITNESSED)
    load_reference(problem)  # the mistakes' helpers may look the reference module up by name
    goldens = artifacts.load_goldens()[problem.slug]
    # Filters keep tied tokens in any order; the practice judge allows that too.
    rule = "filtering" if contract.matches is same_filtering else ""
    stored: dict[str, Any] = {}
    for case_id, args in contract.case_args.items():
        shown = resolve(problem, args)
        expected = decode(goldens[case_id])
        try:
            encoded_args = codec.encode(shown)
        except TypeError:
            raise NotPractised(NEEDS_MODEL) from None
        mistakes = []
        for mistake in contract.mistakes:
            for run in mistake.runs:
                with torch.no_grad():
                    outcome = outcome_of(run, *fresh_args(args))
                if outcome[0] == "value" and contract.iterate and outcome[1] is not None:
                    outcome = ("value", list(outcome[1]))
                # An error, or None (this way of making it does not apply here), names
                # nothing; nor does an answer the practice judge cannot tell from the right one.
                if (outcome[1] is None
                        or contract.matches(("value", expected), outcome)
                        or same_outcome(("value", expected), outcome)
                        or judge.same_outcome(outcome, ("value", expected), rule, shown)):
                    continue
                entry = {"name": mistake.name, "hint": mistake.hint,
                         "outcome": codec.encode((outcome[0], str(outcome[1])
                                                  if outcome[0] == "error" else outcome[1]))}
                if entry not in mistakes:  # two ways of making it can give one answer
                    mistakes.append(entry)
        stored[case_id] = {"args": encoded_args, "expected": codec.encode(expected),
                           "mistakes": mistakes}
    return {"method": contract.method, "module": problem.module or "",
            "arg_names": list(contract.arg_names), "iterate": contract.iterate,
            "judge": rule, "cases": stored}


def exported_model() -> bytes:
    """The shipped GPT as a torch.export program: its computation as a graph of torch
    operations, with no Python source. torch.export records the source line of each
    operation as it traces; those are removed, so neither gpt.py nor a path is in it."""
    import io

    import torch

    import grader.model.gpt as gpt
    from grader.model import artifacts

    model = artifacts.shipped_model().eval()
    cached = gpt.causal_mask
    # The mask is cached by shape, and a traced shape cannot be a cache key.
    gpt.causal_mask = getattr(cached, "__wrapped__", cached)
    try:
        length = torch.export.Dim("T", min=1, max=model.context_length)
        program = torch.export.export(model, (torch.zeros(1, 2, dtype=torch.long),),
                                      dynamic_shapes=({1: length},))
    finally:
        gpt.causal_mask = cached
    for node in program.graph.nodes:
        for key in ("stack_trace", "nn_module_stack", "source_fn_stack", "from_node"):
            node.meta.pop(key, None)
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    return buffer.getvalue()


class ShippedModel:
    """Stands for the shipped GPT among a case's arguments (the copy runs its export)."""


def resolve(problem: Problem, args: tuple) -> tuple:
    """A case's arguments as the learner's code receives them: a module problem's
    weights, described by the check, become the tensors themselves, and the shipped
    model a marker for its exported program."""
    from grader.sandbox.protocol import ModelSpec

    if not problem.module:
        return tuple(ShippedModel() if isinstance(a, ModelSpec) and a.kind == "shipped" else a
                     for a in args)
    from grader.model.parts import state_dict

    config, weights, *inputs = args
    return (dict(config), state_dict(weights), *inputs)


