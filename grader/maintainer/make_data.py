"""Rebuild the shipped files in data/, for maintainers.

Run as `python -m grader.maintainer.make_data STEP`.

Steps: `corpus` writes data/corpus.txt from the grammar; `model` trains on it and
writes the checkpoint, config and vocabulary; `goldens` records the reference
outputs of every check's fixed cases; `manifest` records each file's sha256 and
this platform. `all` runs them in order. Each step overwrites data/, which is
tracked by git: review the diff before committing.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from grader.grading.skeleton import load_reference, materialise
from grader.model import artifacts
from grader.model.corpus import generate_corpus
from grader.model.training import TrainSettings, train
from grader.registry import Problem, problems
from grader.sandbox.protocol import encode


def check_module(problem: Problem):
    spec = importlib.util.spec_from_file_location(f"check_{problem.slug}", problem.checks)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses in a check module look themselves up here
    spec.loader.exec_module(module)
    return module


def make_corpus() -> None:
    artifacts.CORPUS.write_text(generate_corpus(), encoding="utf-8")


def make_model() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        train(artifacts.CORPUS.read_text(encoding="utf-8"), Path(tmp), settings=TrainSettings())
        for name in ("model.safetensors", "config.json", "vocab.json"):
            shutil.copy(Path(tmp) / name, artifacts.DATA / name)


@torch.no_grad()
def make_goldens() -> None:
    torch.set_num_threads(1)
    goldens: dict[str, dict] = {}
    for problem in problems():
        if not problem.checks.is_file():
            continue
        module = check_module(problem)
        reference = load_reference(problem)
        method = getattr(reference, module.METHOD)
        iterate = getattr(module, "ITERATE", False)  # a generator answer: keep its items
        goldens[problem.slug] = {}
        for case_id, args in module.fixed_args().items():
            value = method(*[materialise(a) for a in args])
            goldens[problem.slug][case_id] = encode(list(value) if iterate else value)
    artifacts.GOLDENS.write_text(json.dumps(goldens, indent=1) + "\n", encoding="utf-8")


STEPS = {"corpus": make_corpus, "model": make_model, "goldens": make_goldens,
         "manifest": artifacts.write_manifest}


def main(argv: list[str]) -> int:
    names = list(STEPS) if argv == ["all"] else argv
    unknown = [n for n in names if n not in STEPS]
    if not names or unknown:
        print(__doc__)
        return 2
    for name in names:
        print(f"make_data: {name}")
        STEPS[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
