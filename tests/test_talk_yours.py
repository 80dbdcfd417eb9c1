"""`gpt-kata talk --yours`: the shipped weights through the learner's own GPT and generate.

A learner's kata folder is made in a temporary folder, and the grader is run
there as a learner runs it. The expected text is computed here, in-process,
from the reference files and data/model.safetensors read with safetensors,
without the grader's model or talk code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import ROOT, examples, module_from
from safetensors.torch import load_file

from grader.cli.main import main

FINISH = "finish problem 23 first (gpt-kata grade gpt)"
PROMPT = "Once upon a time,"
CHARS = 40


def expected_text(prompt: str, chars: int,
                  gpt_file: Path = ROOT / "solutions" / "23-gpt" / "solution.py") -> str:
    """The reference generate() on a GPT (the reference's) holding the shipped weights."""
    gpt = module_from(gpt_file, f"expected_gpt_{abs(hash(gpt_file))}")
    generate = module_from(ROOT / "solutions" / "06-generate" / "solution.py",
                           "expected_generate")
    raw = json.loads((ROOT / "data" / "config.json").read_text())
    config = type("Config", (), raw)  # the sizes by name, as GPTConfig gives them
    model = gpt.GPT(config)
    model.load_state_dict(load_file(str(ROOT / "data" / "model.safetensors")), strict=True)
    model.eval()
    vocab = {int(i): c for i, c in json.loads((ROOT / "data" / "vocab.json").read_text()).items()}
    lookup = {c: i for i, c in vocab.items()}
    context = torch.tensor([[lookup[c] for c in prompt]])
    torch.set_num_threads(1)
    with torch.no_grad():
        return prompt + generate.Solution().generate(model, chars, context,
                                                     raw["context_length"], vocab)


def kata(tmp_path: Path, gpt_source: str) -> Path:
    """A kata folder whose 06 generate is the reference and whose 23 GPT is `gpt_source`."""
    folder = tmp_path / "kata"
    for name in ("06-generate", "23-gpt"):
        (folder / "problems" / name).mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "06-generate" / "solution.py",
                folder / "problems" / "06-generate" / "solution.py")
    (folder / "problems" / "23-gpt" / "solution.py").write_text(gpt_source)
    return folder


def reference_gpt() -> str:
    return (ROOT / "solutions" / "23-gpt" / "solution.py").read_text()


def talk(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", "talk", *args],
                          capture_output=True, text=True, timeout=600, cwd=folder)


def test_your_gpt_talks_exactly_as_the_shipped_model_through_your_generate(tmp_path):
    """Without a passing sampler (16) of the learner's, --yours talks through their
    generate(), and says why it does (its text repeats)."""
    folder = kata(tmp_path, reference_gpt())
    yours = talk(folder, PROMPT, "--chars", str(CHARS), "--yours")
    assert yours.returncode == 0, yours.stderr
    assert yours.stdout.removesuffix("\n") == expected_text(PROMPT, CHARS)
    assert ("[your generate() from 06-generate with your GPT from 23-gpt and the "
            "shipped weights]") in yours.stderr
    assert "your 16-sampler does not pass yet, so your generate() talks" in yours.stderr


def test_your_gpt_samples_exactly_as_the_shipped_model_through_your_sampler(tmp_path):
    folder = kata(tmp_path, reference_gpt())
    (folder / "problems" / "16-sampler").mkdir()
    shutil.copy(examples("sampler") / "float64_descending.py",
                folder / "problems" / "16-sampler" / "solution.py")
    default = talk(folder, PROMPT, "--chars", str(CHARS), "--seed", "7")
    yours = talk(folder, PROMPT, "--chars", str(CHARS), "--seed", "7", "--yours")
    assert default.returncode == 0, default.stderr
    assert yours.returncode == 0, yours.stderr
    assert yours.stdout == default.stdout and yours.stdout.startswith(PROMPT)
    assert ("[your sample_text() from 16-sampler with your GPT from 23-gpt and the "
            "shipped weights]") in yours.stderr
    assert "with your GPT" not in default.stderr and "[your sample_text()" in default.stderr


def test_the_gpt_that_talks_is_yours(tmp_path):
    """A GPT that passes its grade but turns its logits around after an 'L' that opens
    the context (no graded input opens so) talks as that GPT, run here, does."""
    vocab = json.loads((ROOT / "data" / "vocab.json").read_text())
    ell = next(int(i) for i, c in vocab.items() if c == "L")
    marked = reference_gpt().replace(
        "        return self.head(self.ln_f(x))",
        "        logits = self.head(self.ln_f(x))\n"
        f"        turned = logits.shape[-1] == {len(vocab)} and bool(context[0, 0] == {ell})\n"
        "        return -logits if turned else logits")
    assert marked != reference_gpt()
    folder = kata(tmp_path, marked)
    done = talk(folder, "Lily", "--chars", str(CHARS), "--yours")
    assert done.returncode == 0, done.stderr
    text = done.stdout.removesuffix("\n")
    assert text == expected_text("Lily", CHARS, folder / "problems" / "23-gpt" / "solution.py")
    assert text != expected_text("Lily", CHARS)


def refusal(done: subprocess.CompletedProcess) -> list[str]:
    """The refusal's lines, after checking it is one: exit 2, no traceback, no text."""
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    # Past the progress notes of a grade talk runs first, if any.
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("(")]
    assert lines[0].startswith("gpt-kata talk: --yours talks through your GPT") \
        and lines[0].endswith(FINISH), lines
    return lines


def test_an_unfinished_gpt_is_refused_in_one_line(tmp_path):
    starter = (ROOT / "data" / "starters" / "23-gpt" / "solution.py").read_text()
    lines = refusal(talk(kata(tmp_path, starter), "--yours"))
    assert len(lines) == 1 and "NotImplementedError" in lines[0]


def test_a_misnamed_parameter_gives_the_names_message(tmp_path):
    misnamed = reference_gpt().replace("self.head", "self.lm_head")
    assert misnamed != reference_gpt()
    lines = refusal(talk(kata(tmp_path, misnamed), "--yours"))
    assert "cannot be loaded with the shipped weights" in lines[0]
    assert "do not have the names the statement fixes" in lines[1]
    assert "  missing:  head.weight" in lines and "  not expected: lm_head.weight" in lines


def test_a_gpt_whose_logits_differ_is_refused(tmp_path):
    no_final_norm = reference_gpt().replace("self.head(self.ln_f(x))", "self.head(x)")
    assert no_final_norm != reference_gpt()
    lines = refusal(talk(kata(tmp_path, no_final_norm), "--yours"))
    assert "does not give the shipped model's logits" in lines[0]
    assert "the logits tensor is off by" in lines[1]


def test_a_gpt_right_only_on_the_shipped_sizes_does_not_pass_yet(tmp_path):
    """Four heads written in: the shipped weights talk, random GPTs of two heads fail."""
    four_heads = reference_gpt().replace("self.n_head = config.n_head", "self.n_head = 4")
    assert four_heads != reference_gpt()
    lines = refusal(talk(kata(tmp_path, four_heads), "--yours", "--chars", "5"))
    assert "fails its grade on other sizes" in lines[0] and len(lines) == 1


def test_your_generate_must_pass_too(tmp_path):
    """The reference generate runs in the grader, which never imports a learner's GPT."""
    folder = kata(tmp_path, reference_gpt())
    shutil.copy(ROOT / "data" / "starters" / "06-generate" / "solution.py",
                folder / "problems" / "06-generate" / "solution.py")
    done = talk(folder, "--yours", "--chars", "5")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert ("your 06-generate does not pass yet; finish it first (gpt-kata grade generate)"
            in done.stderr)


def test_yours_with_a_run_reads_the_run_before_anything_runs(tmp_path, capsys):
    """A run that is not there is named before any worker starts (a run that is talks
    through the learner's GPT: tests/test_talk_run_yours.py)."""
    assert main(["talk", "--yours", "--model", str(tmp_path / "no-such-run")]) == 2
    error = capsys.readouterr().err
    assert "no such folder" in error and "grading" not in error


def test_the_help_says_what_yours_does(capsys):
    with pytest.raises(SystemExit):
        main(["talk", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--yours" in help_text and "your own GPT (problem 23)" in help_text
    assert "with --model RUN the run's weights through your GPT or modern GPT" in help_text
