"""`gpt-kata talk --model modern`: the shipped modern model (data/llama.safetensors)
talks through problem 16's sample_text(); with `--yours`, through the learner's own
modern GPT (problem 35) and their sampler.

The expected text is computed here, in-process, from the reference files and the
checkpoint read with safetensors, without the grader's model or talk code.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import ROOT, examples, module_from
from learner import learner_kata
from safetensors.torch import load_file

SEED = re.compile(r"; seed (\d+): `--seed \1` gives this text again\]$")
PROMPT = "Once upon a time,"


def modern_model(llama_file: Path = ROOT / "solutions" / "35-modern-gpt" / "solution.py"):
    """The reference Llama of problem 35 holding the shipped modern weights."""
    llama = module_from(llama_file, f"expected_llama_{abs(hash(llama_file))}")
    raw = json.loads((ROOT / "data" / "llama-config.json").read_text())
    model = llama.Llama(type("Config", (), raw))  # the sizes by name, as LlamaConfig has them
    model.load_state_dict(load_file(str(ROOT / "data" / "llama.safetensors")), strict=True)
    return model.eval(), raw["context_length"]


def sampled_text(prompt: str, chars: int, seed: int) -> str:
    """The reference sample_text() with talk's defaults on the shipped modern model."""
    sampler = module_from(ROOT / "solutions" / "16-sampler" / "solution.py", "expected_sampler")
    model, context_length = modern_model()
    vocab = {int(i): c for i, c in json.loads((ROOT / "data" / "vocab.json").read_text()).items()}
    lookup = {c: i for i, c in vocab.items()}
    context = torch.tensor([[lookup[c] for c in prompt]])
    torch.set_num_threads(1)
    with torch.no_grad():
        return prompt + sampler.Solution().sample_text(
            model, context, chars, context_length, vocab, 1.0, 0, 1.0, 0, None, seed)


def cli(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True,
                          text=True, timeout=600, cwd=folder)


def label_of(stderr: str) -> str:
    return next(line for line in stderr.splitlines() if line.startswith("["))


def test_the_shipped_modern_model_talks_through_the_reference_sampler(tmp_path):
    folder = learner_kata(tmp_path)
    done = cli(folder, "talk", PROMPT, "--model", "modern", "--chars", "60", "--seed", "3")
    assert done.returncode == 0, done.stderr
    label = label_of(done.stderr)
    assert label.startswith("[the reference sample_text() from 16-sampler with the shipped "
                            "modern model"), label
    # The two shipped models learnt the same stories, and with one seed their texts may
    # well agree: the text is judged against the modern model's alone.
    assert done.stdout.removesuffix("\n") == sampled_text(PROMPT, 60, 3)


def test_yours_is_refused_until_your_modern_gpt_passes(tmp_path):
    folder = learner_kata(tmp_path)
    done = cli(folder, "talk", PROMPT, "--model", "modern", "--yours", "--chars", "10")
    assert done.returncode == 2, done.stderr
    first = done.stderr.strip().splitlines()[0]
    assert "--yours talks through your modern GPT, and your 35-modern-gpt is not finished" \
        in first, first
    assert first.endswith("finish problem 35 first (gpt-kata grade modern-gpt)"), first


def kata_with(tmp_path: Path, llama_source: str) -> Path:
    folder = tmp_path / "kata"
    for name in ("16-sampler", "35-modern-gpt"):
        (folder / "problems" / name).mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "16-sampler" / "solution.py",
                folder / "problems" / "16-sampler" / "solution.py")
    (folder / "problems" / "35-modern-gpt" / "solution.py").write_text(llama_source)
    return folder


def test_your_modern_gpt_and_your_sampler_talk_the_shipped_modern_models_text(tmp_path):
    source = (examples("modern-gpt") / "hf_style.py").read_text()
    folder = kata_with(tmp_path, source)
    done = cli(folder, "talk", PROMPT, "--model", "modern", "--yours", "--chars", "80",
               "--seed", "5")
    assert done.returncode == 0, done.stderr
    label = label_of(done.stderr)
    assert label.startswith("[your sample_text() from 16-sampler with your modern GPT from "
                            "35-modern-gpt and the shipped modern weights"), label
    assert done.stdout.removesuffix("\n") == sampled_text(PROMPT, 80, 5)


def test_a_modern_gpt_with_another_head_is_refused_with_the_logits_that_differ(tmp_path):
    source = (ROOT / "solutions" / "35-modern-gpt" / "solution.py").read_text()
    wrong = source.replace("return self.lm_head(self.norm(x))",
                           "return self.lm_head(x)")
    assert wrong != source
    folder = kata_with(tmp_path, wrong)
    done = cli(folder, "talk", PROMPT, "--model", "modern", "--yours", "--chars", "10")
    assert done.returncode == 2, done.stderr
    first = done.stderr.strip().splitlines()[0]
    assert "does not give the shipped model's logits" in first or "failed its last grade" \
        in first, first


@pytest.mark.parametrize("model", ["./no-such-run"])
def test_yours_with_a_run_that_is_not_there_names_it(tmp_path, model):
    folder = learner_kata(tmp_path)
    done = cli(folder, "talk", PROMPT, "--model", model, "--yours")
    assert done.returncode == 2 and "no-such-run: no such folder" in done.stderr
