"""`gpt-kata train --yours`: the learner's GPT, batches and training step, trained in
the sandbox, into a run that `talk --model RUN` accepts.

A learner's kata folder is made in a temporary folder and the grader run there
as a learner runs it. The expected losses are computed here, in-process, from
the reference files: the same GPT, get_batch and train_step, started from the
seeded weights the statement of `train` gives (torch.manual_seed, then the
shipped architecture's init), on the corpus encoded and split as described,
with the learning-rate schedule written out below.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import ROOT, module_from
from learner_examples import example
from safetensors.torch import load_file

from grader.model.gpt import GPT, GPTConfig

STEPS = 20  # more than one chunk of steps, and an evaluation at the end
SEED = 3


def kata(tmp_path: Path, train_step: Path = ROOT / "solutions" / "25-train-step" / "solution.py"
         ) -> Path:
    """A kata folder with the references of 06, 19 and 23, and `train_step` as 25."""
    folder = tmp_path / "kata"
    for name in ("06-generate", "19-batches", "23-gpt"):
        (folder / "problems" / name).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / name / "solution.py",
                    folder / "problems" / name / "solution.py")
    (folder / "problems" / "25-train-step").mkdir(parents=True)
    shutil.copy(train_step, folder / "problems" / "25-train-step" / "solution.py")
    record_passing_references(folder)
    return folder


def record_passing_references(folder: Path) -> None:
    """Record the reference files as passed, as `gpt-kata grade` records a pass, so that
    a run starts at once: the references pass (tests/test_grading.py), and grading
    a changed file first is tested with the unfinished and diverging steps."""
    status = {}
    for solution in (folder / "problems").glob("*/solution.py"):
        reference = ROOT / "solutions" / solution.parent.name / "solution.py"
        if solution.read_bytes() == reference.read_bytes():
            slug = solution.parent.name.split("-", 1)[1]
            status[slug] = {"sha256": hashlib.sha256(solution.read_bytes()).hexdigest(),
                            "status": "pass", "starter": False}
    (folder / ".gpt-kata").mkdir()
    (folder / ".gpt-kata" / "status.json").write_text(json.dumps(status, indent=1) + "\n")


def gpt_kata(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True,
                          text=True, timeout=1800, cwd=folder)


def rate(step: int) -> float:
    """3e-3 reached linearly over 100 steps, then a cosine down to 3e-4 at STEPS."""
    if step < 100:
        return 3e-3 * (step + 1) / 100
    progress = (step - 100) / max(1, STEPS - 100)
    return 3e-4 + 0.5 * (3e-3 - 3e-4) * (1 + math.cos(math.pi * progress))


def training_start(seed: int) -> tuple[torch.Tensor, GPTConfig, torch.nn.Module,
                                      torch.optim.Optimizer]:
    """What a run starts from, built here with the references: the shipped corpus as
    ids, its config, the reference GPT holding the weights `train` starts from with
    `seed`, and its AdamW (learning rate 3e-3, weight decay 0.01)."""
    text = (ROOT / "data" / "corpus.txt").read_text(encoding="utf-8")
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([lookup[c] for c in text])
    config = GPTConfig(vocab_size=len(chars))
    gpt = module_from(ROOT / "solutions" / "23-gpt" / "solution.py", "expected_gpt")
    torch.manual_seed(seed)
    start = GPT(config).state_dict()
    model = gpt.GPT(config)
    model.load_state_dict(start, strict=True)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    return data, config, model, optimizer


def expected_training() -> tuple[list[float], dict[str, torch.Tensor]]:
    """The reference GPT trained here by the reference get_batch and train_step."""
    data, config, model, optimizer = training_start(SEED)
    train_data = data[: int(0.9 * len(data))]
    batches = module_from(ROOT / "solutions" / "19-batches" / "solution.py", "expected_batches")
    step = module_from(ROOT / "solutions" / "25-train-step" / "solution.py", "expected_step")
    generator = torch.Generator().manual_seed(SEED)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the same thread count as the run, so sums run in the same order
    try:
        losses = []
        for k in range(STEPS):
            for group in optimizer.param_groups:
                group["lr"] = rate(k)
            x, y = batches.Solution().get_batch(train_data, config.context_length, 64, generator)
            losses.append(step.Solution().train_step(model, optimizer, x, y))
    finally:
        torch.set_num_threads(threads)
    return losses, model.state_dict()


def test_your_gpt_trains_into_a_run_that_talks(tmp_path):
    folder = kata(tmp_path)
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--steps", str(STEPS), "--seed", str(SEED),
                    "--threads", "1", "--out", str(run))
    assert done.returncode == 0, done.stderr
    # Not a terminal: one plain line per evaluation, the first before any step.
    assert done.stdout.startswith(f"step 0/{STEPS}  loss ")
    assert f"step {STEPS}/{STEPS}  loss " in done.stdout
    # And a line at each tenth of the steps: the grader asks for a tenth at a time.
    tenths = re.findall(rf"^step (\d+)/{STEPS}  \d+:\d\d since the first step", done.stdout,
                        re.MULTILINE)
    assert [int(step) * 10 // STEPS for step in tenths] == list(range(1, 11)), done.stdout
    for name in ("config.json", "vocab.json", "model.safetensors", "loss_log.tsv"):
        assert (run / name).is_file(), name
    assert (run / "loss_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    losses, weights = expected_training()
    rows = (run / "step_losses.tsv").read_text().splitlines()
    assert rows[0] == "step\tloss"
    got = [float(row.split("\t")[1]) for row in rows[1:]]
    assert [int(row.split("\t")[0]) for row in rows[1:]] == list(range(1, STEPS + 1))
    # The same operations on the same threads: equal but for a last bit, if that.
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(got, losses, strict=True)), \
        (got, losses)
    assert losses[-1] < losses[0] - 0.5  # it learned
    written = load_file(str(run / "model.safetensors"))
    assert written.keys() == weights.keys()
    for name, tensor in weights.items():
        torch.testing.assert_close(written[name], tensor, rtol=1e-4, atol=1e-5, msg=name)

    talked = gpt_kata(folder, "talk", "Once upon a time,", "--model", str(run),
                      "--chars", "30")
    assert talked.returncode == 0, talked.stderr
    assert talked.stdout.startswith("Once upon a time,")
    assert len(talked.stdout.removesuffix("\n")) == len("Once upon a time,") + 30
    assert "the reference sample_text() from 16-sampler" in talked.stderr


def test_an_unfinished_training_step_is_refused_in_one_line(tmp_path):
    folder = kata(tmp_path, ROOT / "data" / "starters" / "25-train-step" / "solution.py")
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--steps", "5", "--out", str(run))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    # Past the notes of the grades it runs first.
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("(")]
    assert lines == ["gpt-kata train: --yours trains your GPT with your get_batch and "
                     "train_step, and your 25-train-step is still the starter; finish "
                     "problem 25 first (gpt-kata grade train-step)"]
    assert not run.exists()


def test_weights_that_are_not_the_gpts_are_refused_before_anything_is_written():
    from grader.learner.errors import UsageError
    from grader.learner.training.train_yours import check_weights

    expected = GPT(GPTConfig(vocab_size=5, context_length=4, n_layer=1, n_head=1,
                             n_embd=4)).state_dict()
    good = {name: torch.zeros_like(w) for name, w in expected.items()}
    assert check_weights(good, expected).keys() == expected.keys()
    renamed = {("lm_head.weight" if n == "head.weight" else n): w for n, w in good.items()}
    wrong_shape = {**good, "head.weight": torch.zeros(5, 5)}
    diverged = {**good, "head.weight": torch.full_like(good["head.weight"], float("nan"))}
    for weights, words in ((renamed, "missing: head.weight; not expected: lm_head.weight"),
                           (wrong_shape, "head.weight has shape (5, 5), not (5, 4)"),
                           (diverged, "head.weight holds values that are not finite"),
                           ([1.0], "did not come back as tensors")):
        with pytest.raises(UsageError, match=re.escape(words)):
            check_weights(weights, expected)


def test_a_chunk_reply_that_is_not_losses_is_refused():
    from grader.learner.errors import UsageError
    from grader.learner.training.train_yours import check_chunk

    check_chunk([2.5, 2.4], [2.3, 2.35], 2, True)
    check_chunk([2.5], None, 1, False)
    for losses, evaluation, steps, evaluated in (([2.5], None, 2, False),
                                                 ([2.5, "2.4"], None, 2, False),
                                                 ([2.5, float("nan")], None, 2, False),
                                                 ([2.5], None, 1, True),
                                                 ([2.5], [2.3, 2.3], 1, False)):
        with pytest.raises(UsageError, match="cannot be read as losses"):
            check_chunk(losses, evaluation, steps, evaluated)


def test_a_missing_problem_is_named(tmp_path):
    folder = kata(tmp_path)
    shutil.rmtree(folder / "problems" / "19-batches")
    done = gpt_kata(folder, "train", "--yours", "--steps", "5", "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("gpt-kata train: --yours trains your GPT with your "
                                  "get_batch and train_step, and your 19-batches has no "
                                  "solution.py")
    assert done.stderr.rstrip().endswith("finish problem 19 first (gpt-kata grade batches)")
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_step_that_diverges_while_training_stops_the_run_in_one_line(tmp_path):
    """A train_step that passes its grade but returns NaN once the loss on windows of
    the shipped 48 tokens falls below 3.0, which the graded cases never reach and the
    run, with seed 0, first does at step 28: the chunk that holds it is named (the grader
    asks for a tenth of these 30 steps at a time: 28-30), and no model is written."""
    reference = (ROOT / "solutions" / "25-train-step" / "solution.py").read_text()
    diverging = reference.replace(
        "        return loss.item()",
        "        low = loss.item() < 3.0 and x.shape[1] == 48\n"
        "        return float('nan') if low else loss.item()",
    )
    assert diverging != reference
    step = tmp_path / "diverging.py"
    step.write_text(diverging)
    folder = kata(tmp_path, step)
    run = tmp_path / "run"
    # 30 steps: the step the loss first falls below 3.0 (28) must be in the run.
    done = gpt_kata(folder, "train", "--yours", "--steps", "30", "--threads", "1",
                    "--out", str(run))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("(")]
    assert len(lines) == 1 and lines[0].startswith(
        "gpt-kata train: training failed within steps 28-30"), lines
    assert "train_step() returned a loss of nan: training diverged" in lines[0]
    assert f"(the run in {run} failed: it keeps only its loss_log.tsv)" in lines[0]
    assert not (run / "model.safetensors").exists()
    talked = gpt_kata(folder, "talk", "--model", str(run))
    assert talked.returncode == 2, talked.stderr
    assert "this training run failed (training failed within steps 28-30" in talked.stderr
    assert "training has not finished" not in talked.stderr


def test_a_gpt_with_a_mask_buffer_trains_to_the_end_and_talks(tmp_path):
    """A GPT that keeps its causal mask with register_buffer, as statements 20 and 21
    allow and problem 23 passes (the gpt examples' nanogpt_style.py): the buffer
    is its own, so the run ends with a model, and talk talks with it."""
    gpt = example("gpt", "nanogpt_style.py", tmp_path)
    assert "register_buffer" in gpt.read_text()
    folder = kata(tmp_path)
    shutil.copy(gpt, folder / "problems" / "23-gpt" / "solution.py")
    status_file = folder / ".gpt-kata" / "status.json"
    status = json.loads(status_file.read_text())
    # Its pass is graded by tests/test_submissions.py; recorded here so the run starts.
    status["gpt"] = {"sha256": hashlib.sha256(gpt.read_bytes()).hexdigest(),
                     "status": "pass", "starter": False}
    status_file.write_text(json.dumps(status))
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--steps", str(STEPS), "--threads", "1",
                    "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert f"step {STEPS}/{STEPS}  loss " in done.stdout
    assert (run / "model.safetensors").is_file() and not (run / "failed.txt").exists()
    written = load_file(str(run / "model.safetensors"))
    assert written.keys() == GPT(GPTConfig(vocab_size=40)).state_dict().keys()
    talked = gpt_kata(folder, "talk", "Tom", "--model", str(run), "--chars", "20")
    assert talked.returncode == 0, talked.stderr
    # The text may end in a newline of its own: only talk's one is taken off.
    assert talked.stdout.startswith("Tom") and len(talked.stdout.removesuffix("\n")) == 23


def test_a_get_batch_of_views_trains_with_a_step_that_views_them(tmp_path):
    """Problem 19's unfold.py example returns rows[:, :-1] and rows[:, 1:], views that
    are not contiguous, and passes; the reference train_step flattens with .view(-1),
    which 25's cases (contiguous batches) pass. The grader's loop hands the step its
    batch as those cases do, so the two passing files train together."""
    batches = example("batches", "unfold.py", tmp_path)
    folder = kata(tmp_path)
    shutil.copy(batches, folder / "problems" / "19-batches" / "solution.py")
    status_file = folder / ".gpt-kata" / "status.json"
    status = json.loads(status_file.read_text())
    status["batches"] = {"sha256": hashlib.sha256(batches.read_bytes()).hexdigest(),
                         "status": "pass", "starter": False}
    status_file.write_text(json.dumps(status))
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--steps", "2", "--threads", "1",
                    "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert (run / "model.safetensors").is_file()


def test_an_error_in_your_gpt_names_its_problems_file(tmp_path):
    """Three problems' files train together: an error raised in the GPT's file is shown
    in it ("23-gpt/solution.py:LINE"), not at the line of 25's that called the model."""
    folder = kata(tmp_path)
    gpt = folder / "problems" / "23-gpt" / "solution.py"
    source = gpt.read_text()
    raising = source.replace("        T = context.shape[1]\n",
                             "        T = context.shape[1]\n"
                             "        if torch.is_grad_enabled():\n"
                             "            raise ValueError('no gradients here')\n")
    assert raising != source
    gpt.write_text(raising)
    line = raising.splitlines().index("            raise ValueError('no gradients here')") + 1
    # Recorded as passing, as a grade that never computes gradients would leave it.
    status = json.loads((folder / ".gpt-kata" / "status.json").read_text())
    status["gpt"]["sha256"] = hashlib.sha256(gpt.read_bytes()).hexdigest()
    (folder / ".gpt-kata" / "status.json").write_text(json.dumps(status))
    done = gpt_kata(folder, "train", "--yours", "--steps", "5", "--out", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"23-gpt/solution.py:{line}: ValueError: no gradients here" in done.stderr
