"""`gpt-kata talk --model RUN --yours`: a run's weights through the learner's own GPT.

A run is trained here, in-process, for a few steps (its weights are not the shipped
ones), outside the learner's kata folder, where a sandboxed worker cannot read it.
The learner's GPT (or modern GPT, for a modern run) is the reference's file, run in the
sandbox: through it the run must say exactly what the grader's own model of the run
says with the same sampler and seed, and a GPT that gives other logits is refused
before it talks.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_train_yours import record_passing_references

from grader.model.llama import LlamaConfig
from grader.model.training import TrainSettings, train

PROMPT = "Once upon a time,"


class Runs(dict):
    """A GPT's run and a modern GPT's, each a few steps from train's seeded start,
    each trained when a test first asks for it (a test run of only some of them
    trains only what they need)."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def __missing__(self, kind: str) -> Path:
        text = (ROOT / "data" / "corpus.txt").read_text(encoding="utf-8")
        if kind == "gpt":
            train(text, self.folder / kind, settings=TrainSettings(steps=8, threads=1),
                  show_progress=False)
        else:
            train(text, self.folder / kind, config=LlamaConfig(vocab_size=2),
                  settings=TrainSettings(steps=2, threads=1), show_progress=False)
        self[kind] = self.folder / kind
        return self[kind]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Runs:
    return Runs(tmp_path_factory.mktemp("runs"))


def kata(tmp_path: Path, model: str, source: str) -> Path:
    """A kata folder with the references of 06 and 16, and `source` as the model; the
    references recorded as passed, as a grade records them, so that talk starts at once
    (a source that is not the reference's is graded first, as talk does)."""
    folder = tmp_path / "kata"
    for name in ("06-generate", "16-sampler"):
        (folder / "problems" / name).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / name / "solution.py",
                    folder / "problems" / name / "solution.py")
    name = "35-modern-gpt" if model == "modern" else "23-gpt"
    (folder / "problems" / name).mkdir(parents=True)
    (folder / "problems" / name / "solution.py").write_text(source)
    record_passing_references(folder)
    return folder


def talk(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "talk", *args],
                          capture_output=True, text=True, timeout=600, cwd=folder)


SOURCES = {
    "gpt": ROOT / "solutions" / "23-gpt" / "solution.py",
    "modern": ROOT / "solutions" / "35-modern-gpt" / "solution.py",
}


@pytest.mark.parametrize("model", ["gpt", "modern"])
def test_a_run_talks_through_your_model_as_through_the_graders(tmp_path, runs, model):
    folder = kata(tmp_path, model, SOURCES[model].read_text())
    run = str(runs[model])
    graders = talk(folder, PROMPT, "--model", run, "--chars", "40", "--seed", "7")
    yours = talk(folder, PROMPT, "--model", run, "--chars", "40", "--seed", "7", "--yours")
    assert graders.returncode == 0, graders.stderr
    assert yours.returncode == 0, yours.stderr
    assert yours.stdout == graders.stdout and yours.stdout.startswith(PROMPT)
    what, problem = ("modern GPT", "35-modern-gpt") if model == "modern" else ("GPT", "23-gpt")
    assert (f"[your sample_text() from 16-sampler with your {what} from {problem} and the "
            f"weights trained in {runs[model].resolve()}]") in yours.stderr
    assert "with your" not in graders.stderr


def test_a_gpt_whose_logits_differ_from_the_runs_is_refused(tmp_path, runs):
    reference = SOURCES["gpt"].read_text()
    no_final_norm = reference.replace("self.head(self.ln_f(x))", "self.head(x)")
    assert no_final_norm != reference
    done = talk(kata(tmp_path, "gpt", no_final_norm), PROMPT, "--model", str(runs["gpt"]),
                "--yours", "--chars", "5")
    assert done.returncode == 2 and done.stdout == "", done.stderr
    first = done.stderr.strip().splitlines()[0]
    assert "your 23-gpt does not give the run's logits" in first, first


def test_weights_are_kept_under_a_handle_both_sides_make():
    """The worker keeps handed weights under the handle it makes of them, which the
    grader makes too: other weights, even one value apart, have another handle."""
    import torch

    from grader.model.spec import ModelSpec
    from grader.model.yours import hand, handle_of

    weights = {"head.weight": torch.ones(2, 3), "head.bias": torch.zeros(2)}
    handle = hand(weights)
    assert handle == handle_of(weights) != 0
    nudged = {**weights, "head.bias": torch.tensor([0.0, 1e-7])}
    assert handle_of(nudged) != handle
    assert "a trained run's weights" in repr(ModelSpec("yours", {"n_embd": 2}, handle, "x"))
    with pytest.raises(TypeError):
        hand({"head.weight": [1.0, 2.0]})


def test_a_worker_that_does_not_keep_the_weights_as_handed_is_not_talked_with():
    """The handle comes from the worker, where the learner's code runs: one that is not
    the grader's stops talk before any text."""
    import torch

    from grader.learner.tools.talk import Implementation
    from grader.registry import find
    from grader.sandbox.host.process import CallOutcome

    class Forging:
        def call(self, method, args):
            return CallOutcome(result=12345)

    implementation = Implementation(find("sampler"), True, pool=None,
                                    weights={"head.weight": torch.ones(2, 2)})
    implementation._process = Forging()
    with pytest.raises(RuntimeError, match="did not keep the run's weights as they were"):
        implementation.hand_weights()
