"""Rebuild the shipped files in data/, for maintainers.

Run as `python -m grader.maintainer.make_data STEP`.

Steps: `starters` snapshots every problem's starter into data/starters/NN-slug/,
the pristine copy that the tests grade and that a learner can go back to;
`corpus` writes data/corpus.txt from the grammar; `model` trains on it and
writes the checkpoint, config and vocabulary; `modern-model` trains the Llama-style
decoder on the same corpus and vocabulary and writes data/llama.safetensors and
data/llama-config.json, with their sha256 in the manifest; `goldens` records the reference
outputs of every check's fixed cases (`new-goldens`: only of problems that have
none yet, keeping the others as they are); `manifest` records each file's sha256 and
this platform. `all` runs them in order. Each step overwrites data/, which is
tracked by git: review the diff before committing. On another platform than the
goldens', `goldens` and `manifest` are refused unless given `--force`.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import msgspec
import torch

from grader.grading.contracts.declaring import load_check_module
from grader.grading.subject.reference import load_reference
from grader.model import artifacts
from grader.model.config import MODERN_SETTINGS, TrainSettings
from grader.model.corpus import generate_corpus
from grader.model.llama import LlamaConfig
from grader.model.training import train
from grader.paths import STARTERS
from grader.registry import Problem, problems
from grader.reuse import unfinished_methods
from grader.sandbox.wire.encoding import encode


def make_starters() -> None:
    # The snapshot is copied from problems/, so a maintainer who tried a solution
    # there must not freeze it as the learner's starting point: refuse instead.
    sources: dict[str, str] = {}
    for problem in problems():
        source = problem.starter.read_text(encoding="utf-8")
        missing = set(problem.methods) - set(unfinished_methods(source))
        if missing:
            raise SystemExit(
                f"make_data: {problem.starter} is not a pristine starter: "
                f"{', '.join(sorted(missing))} must raise NotImplementedError"
            )
        sources[problem.folder] = source
    if STARTERS.exists():
        shutil.rmtree(STARTERS)  # folders of renamed or removed problems go too
    for folder, source in sources.items():
        (STARTERS / folder).mkdir(parents=True)
        (STARTERS / folder / "solution.py").write_text(source, encoding="utf-8")


def make_corpus() -> None:
    artifacts.CORPUS.write_text(generate_corpus(), encoding="utf-8")


def make_model() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        train(artifacts.corpus_text(), Path(tmp), settings=TrainSettings())
        for name in ("model.safetensors", "config.json", "vocab.json"):
            shutil.copy(Path(tmp) / name, artifacts.DATA / name)


def make_modern_model() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        train(artifacts.corpus_text(), Path(tmp),
              config=LlamaConfig(vocab_size=2), settings=MODERN_SETTINGS)
        if artifacts.load_vocab(Path(tmp) / "vocab.json") != artifacts.load_vocab():
            raise SystemExit("make_data: the corpus' vocabulary is not data/vocab.json: "
                             "run the model step first, so both models read one vocabulary")
        shutil.copy(Path(tmp) / "model.safetensors", artifacts.LLAMA_CHECKPOINT)
        shutil.copy(Path(tmp) / "config.json", artifacts.LLAMA_CONFIG)
    # Only these two files' sha256 change: the goldens' platform stays the recorded one.
    record_sha256(artifacts.LLAMA_CHECKPOINT, artifacts.LLAMA_CONFIG)


def record_sha256(*paths: Path) -> None:
    """The manifest with the sha256 of `paths` brought up to date, and nothing else."""
    manifest = artifacts.load_manifest()
    for path in paths:
        manifest["files"][path.name] = artifacts.sha256(path)
    artifacts.write_json(artifacts.MANIFEST, manifest)


@torch.no_grad()
def goldens_of(problem: Problem) -> dict:
    answers = load_check_module(problem).CONTRACT.reference_answers(load_reference(problem))
    # As JSON holds them: a tensor's bytes in base64 (grader/sandbox/wire/encoding.py).
    return {case_id: msgspec.to_builtins(encode(a)) for case_id, a in answers.items()}


def make_goldens() -> None:
    torch.set_num_threads(1)
    goldens = {p.slug: goldens_of(p) for p in problems() if p.checks.is_file()}
    artifacts.write_json(artifacts.GOLDENS, goldens)


def make_new_goldens() -> None:
    """Goldens for the problems and the fixed cases that have none yet, every recorded
    one kept byte for byte.

    For adding a problem or a case on another platform than the goldens'
    (data/manifest.json): recording them all again there would change the last bits
    of every float. The manifest's sha256 of goldens.json follows; its platform stays
    the recorded goldens', which the new ones agree with within the tolerances.
    """
    torch.set_num_threads(1)
    # The file as it is now: load_goldens() keeps what this process read first, which
    # a grade earlier in the same process (a test run's) may have read from elsewhere.
    recorded = artifacts.load_goldens.__wrapped__()
    goldens = {}
    for p in problems():
        if not p.checks.is_file():
            continue
        kept = recorded.get(p.slug)
        contract = load_check_module(p).CONTRACT
        if kept is None or (contract.goldens and set(contract.case_args) - set(kept)):
            fresh = goldens_of(p)
            kept = {case_id: (kept or {}).get(case_id, answer)
                    for case_id, answer in fresh.items()}
        goldens[p.slug] = kept
    artifacts.write_json(artifacts.GOLDENS, goldens)
    record_sha256(artifacts.GOLDENS)


STEPS = {"starters": make_starters, "corpus": make_corpus, "model": make_model,
         "modern-model": make_modern_model, "goldens": make_goldens,
         "new-goldens": make_new_goldens, "manifest": artifacts.write_manifest}


# The steps that record this platform as the goldens': on another, they rewrite the
# last bits of every problem's goldens and move the platform the others' grades
# compare with.
MOVES_THE_GOLDENS = ("goldens", "manifest")


def main(argv: list[str]) -> int:
    force = "--force" in argv
    argv = [a for a in argv if a != "--force"]
    names = list(STEPS) if argv == ["all"] else argv
    unknown = [n for n in names if n not in STEPS]
    if not names or unknown:
        print(__doc__)
        return 2
    moving = [n for n in names if n in MOVES_THE_GOLDENS]
    if moving and argv != ["all"] and not force and not artifacts.goldens_platform_matches():
        print(f"make_data: {' and '.join(moving)} would record this platform, "
              f"{artifacts.this_platform()}, over the goldens' "
              f"({artifacts.load_manifest().get('platform')}), and rewrite every problem's "
              "goldens: for a new problem run `starters new-goldens` instead, or add "
              "--force to move the goldens here", file=sys.stderr)
        return 2
    for name in names:
        print(f"make_data: {name}")
        STEPS[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
