"""`gpt-kata train --yours --model modern`: the learner's modern GPT (problem 35)
trained by their own loop (problem 30), or until it passes by their step (25), into
a run that `talk --model RUN` loads and talks with.

The expected run is computed here, in-process, from the reference files: the
reference Llama of problem 35 started from the weights `train --model modern` starts
from with the seed (torch.manual_seed, then the grader's Llama's init, loaded by
name), trained by the reference train_loop with the settings the statement of
`train --yours` gives (train's schedule, its warm-up cut to steps - 1, clipping to
1.0, 8 fixed batches of 64 windows drawn with a generator seeded with 1).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
import torch
from conftest import ROOT, module_from
from safetensors.torch import load_file
from test_train_yours import gpt_kata, record_passing_references

from grader.model.llama import Llama, LlamaConfig

STEPS = 30
SEED = 3
PROMPT = "Once upon a time,"
REFERENCES = ("16-sampler", "30-train-loop", "35-modern-gpt")
STARTERS = ROOT / "data" / "starters"


def kata(tmp_path: Path, *extra: str, loop: Path | None = None) -> Path:
    """A kata folder with the references of 16, 30 and 35 (and `extra`), recorded as
    passed; `loop` in place of the reference train-loop."""
    folder = tmp_path / "kata"
    for name in (*REFERENCES, *extra):
        (folder / "problems" / name).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / name / "solution.py",
                    folder / "problems" / name / "solution.py")
    if loop is not None:
        shutil.copy(loop, folder / "problems" / "30-train-loop" / "solution.py")
    record_passing_references(folder)
    return folder


def shipped_modern_config() -> dict:
    """The shipped modern model's sizes on the shipped corpus's vocabulary."""
    return json.loads((ROOT / "data" / "llama-config.json").read_text())


def expected_run() -> tuple[list[tuple[int, float, float]], dict[str, torch.Tensor]]:
    text = (ROOT / "data" / "corpus.txt").read_text(encoding="utf-8")
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([lookup[c] for c in text])
    config = LlamaConfig(**{**shipped_modern_config(), "vocab_size": len(chars)})
    torch.manual_seed(SEED)
    start = Llama(config).state_dict()
    llama = module_from(ROOT / "solutions" / "35-modern-gpt" / "solution.py", "expected_llama")
    model = llama.Llama(config)
    model.load_state_dict(start, strict=True)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    loop = module_from(ROOT / "solutions" / "30-train-loop" / "solution.py", "expected_loop")
    split = int(0.9 * len(data))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the run's thread count, so that sums run in the same order
    try:
        log = list(loop.Solution().train_loop(
            model, optimizer, data[:split], data[split:], torch.Generator().manual_seed(SEED),
            torch.Generator().manual_seed(1), steps=STEPS, batch_size=64,
            context_length=config.context_length, max_lr=3e-3, min_lr=3e-4,
            warmup_steps=STEPS - 1, max_norm=1.0, eval_every=100, eval_batches=8))
    finally:
        torch.set_num_threads(threads)
    return log, model.state_dict()


def greedy_text(run: Path, chars: int) -> str:
    """The reference sampler, greedy, on the reference Llama holding the run's weights."""
    llama = module_from(ROOT / "solutions" / "35-modern-gpt" / "solution.py", "greedy_llama")
    sampler = module_from(ROOT / "solutions" / "16-sampler" / "solution.py", "greedy_sampler")
    config = json.loads((run / "config.json").read_text())
    model = llama.Llama(LlamaConfig(**config))
    model.load_state_dict(load_file(str(run / "model.safetensors")), strict=True)
    vocab = {int(i): c for i, c in json.loads((run / "vocab.json").read_text()).items()}
    lookup = {c: i for i, c in vocab.items()}
    context = torch.tensor([[lookup[c] for c in PROMPT]])
    with torch.no_grad():
        return PROMPT + sampler.Solution().sample_text(
            model.eval(), context, chars, config["context_length"], vocab, 0.0, 0, 1.0, 0,
            None, 0)


def one_line(stderr: str) -> list[str]:
    """stderr past the notes, in parentheses, of the grades run first."""
    return [line for line in stderr.strip().splitlines() if not line.startswith("(")]


def test_your_modern_gpt_trains_with_your_loop_into_a_run_that_talks(tmp_path):
    folder = kata(tmp_path)
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--model", "modern", "--steps", str(STEPS),
                    "--seed", str(SEED), "--threads", "1", "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert ("training with your train_loop (problem 30), on your modern GPT (problem 35)"
            in done.stderr)
    assert json.loads((run / "config.json").read_text()) == shipped_modern_config()
    log, weights = expected_run()
    rows = [row.split("\t") for row in (run / "loss_log.tsv").read_text().splitlines()[1:]]
    assert [int(row[0]) for row in rows] == [0, STEPS] == [entry[0] for entry in log]
    for row, (_, train_loss, val_loss) in zip(rows, log, strict=True):
        assert (row[1], row[2]) == (f"{float(train_loss):.4f}", f"{float(val_loss):.4f}")
    assert log[-1][1] < log[0][1] - 0.5  # it learned
    written = load_file(str(run / "model.safetensors"))
    assert written.keys() == weights.keys()
    for name, tensor in weights.items():
        torch.testing.assert_close(written[name], tensor, rtol=1e-4, atol=1e-5, msg=name)

    talked = gpt_kata(folder, "talk", PROMPT, "--model", str(run), "--chars", "40",
                      "--temperature", "0")
    assert talked.returncode == 0, talked.stderr
    assert f"your sample_text() from 16-sampler with the model trained in {run}" \
        in talked.stderr
    assert talked.stdout.removesuffix("\n") == greedy_text(run, 40)


def test_an_unfinished_loop_trains_your_modern_gpt_with_your_step(tmp_path):
    folder = kata(tmp_path, "19-batches", "25-train-step",
                  loop=STARTERS / "30-train-loop" / "solution.py")
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--model", "modern", "--steps", "3",
                    "--threads", "1", "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert "training with your train_step (problem 25) in the grader's loop" in done.stderr
    assert json.loads((run / "config.json").read_text()) == shipped_modern_config()
    assert len((run / "step_losses.tsv").read_text().splitlines()) == 1 + 3
    talked = gpt_kata(folder, "talk", "Tom", "--model", str(run), "--chars", "20")
    assert talked.returncode == 0, talked.stderr
    assert talked.stdout.startswith("Tom") and len(talked.stdout.removesuffix("\n")) == 23


def test_an_unfinished_modern_gpt_is_refused_in_one_line_before_training(tmp_path):
    folder = kata(tmp_path)
    shutil.copy(STARTERS / "35-modern-gpt" / "solution.py",
                folder / "problems" / "35-modern-gpt" / "solution.py")
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--model", "modern", "--steps", "5",
                    "--out", str(run))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert one_line(done.stderr) == [
        "gpt-kata train: --yours trains your modern GPT with your train_loop (problem 30), "
        "or until it passes with your get_batch and train_step, and your 35-modern-gpt is "
        "still the starter; finish problem 35 first (gpt-kata grade modern-gpt)"]
    assert not run.exists()


def test_an_unfinished_loop_without_a_step_is_refused_naming_problem_30(tmp_path):
    folder = kata(tmp_path, loop=STARTERS / "30-train-loop" / "solution.py")
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--model", "modern", "--steps", "5",
                    "--out", str(run))
    assert done.returncode == 2, done.stderr
    lines = one_line(done.stderr)
    assert len(lines) == 1, lines
    assert lines[0].endswith("and your 30-train-loop is still the starter; finish problem "
                             "30 first (gpt-kata grade train-loop)"), lines
    assert not run.exists()


def test_a_misnamed_parameter_is_refused_before_the_first_step(tmp_path):
    """A modern GPT whose output head is called `head` (the GPT's name): the run ends
    when the starting weights are loaded by name, before any step, and leaves no run."""
    reference = (ROOT / "solutions" / "35-modern-gpt" / "solution.py").read_text()
    misnamed = reference.replace("self.lm_head", "self.head")
    assert misnamed != reference
    folder = kata(tmp_path)
    llama = folder / "problems" / "35-modern-gpt" / "solution.py"
    llama.write_text(misnamed)
    status_file = folder / ".gpt-kata" / "status.json"
    status = json.loads(status_file.read_text())
    # Recorded as passed so that the run starts: the names are what must stop it.
    status["modern-gpt"] = {"sha256": hashlib.sha256(llama.read_bytes()).hexdigest(),
                            "status": "pass", "starter": False}
    status_file.write_text(json.dumps(status))
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--model", "modern", "--steps", str(STEPS),
                    "--threads", "1", "--out", str(run))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    # The message grading gives for these names, after the one line that says what failed.
    lines = one_line(done.stderr)
    assert lines[0].startswith("gpt-kata train: building your modern GPT or starting your "
                               "train_loop failed: ParameterNamesError"), lines
    assert "  missing:  lm_head.weight" in lines and "  not expected: head.weight" in lines
    assert not run.exists()


def test_the_graders_own_modern_training_writes_a_modern_run(tmp_path):
    from grader.model.runs import load_run

    run = tmp_path / "run"
    done = gpt_kata(tmp_path, "train", "--model", "modern", "--steps", "2", "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert f"talk with it: gpt-kata talk --model {run}" in done.stdout
    loaded = load_run(run)
    assert isinstance(loaded.model, Llama)
    assert loaded.config.to_dict() == shipped_modern_config()
    # A model description carries whole sizes only: the floats stay in config.json.
    assert loaded.spec().config == {k: v for k, v in shipped_modern_config().items()
                                    if isinstance(v, int)}


def test_a_run_config_is_a_gpts_or_a_modern_gpts_and_nothing_between(tmp_path):
    from grader.model.runs import RunError, read_config

    path = tmp_path / "config.json"
    modern = shipped_modern_config()
    gpt = {k: modern[k] for k in ("vocab_size", "context_length", "n_layer", "n_head",
                                  "n_embd")}
    path.write_text(json.dumps(modern))
    assert isinstance(read_config(path), LlamaConfig)
    path.write_text(json.dumps(gpt))
    assert not isinstance(read_config(path), LlamaConfig)
    for raw, words in (({**gpt, "n_kv_head": 2}, "is not a model config"),
                       ({**modern, "n_kv_head": 3}, "not a multiple of n_kv_head"),
                       ({**modern, "n_embd": 60, "n_head": 4, "n_kv_head": 2},
                        "the head size n_embd / n_head is odd"),
                       ({**modern, "rope_base": -1.0}, "rope_base is -1.0, not a positive"),
                       ({**modern, "norm_eps": "1e-5"}, "norm_eps is '1e-5'")):
        path.write_text(json.dumps(raw))
        with pytest.raises(RunError, match=re.escape(words)):
            read_config(path)
