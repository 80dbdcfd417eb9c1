"""`gpt-kata train --yours` runs the learner's own training loop once problem 30 passes,
and the learner's step in the grader's loop until then, saying which.

The expected run is computed here, in-process, from the reference files: the
reference GPT started from the seeded weights `train` starts from, trained by the
reference train_loop with the settings the statement of `train --yours` gives
(train's schedule, its warm-up cut to steps - 1, clipping to 1.0, 8 fixed batches
of 64 windows drawn with a generator seeded with 1).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch
from conftest import ROOT, module_from
from safetensors.torch import load_file
from test_train_yours import gpt_kata, kata, record_passing_references, training_start

STEPS = 30
SEED = 3


def with_loop(tmp_path: Path, loop: Path) -> Path:
    folder = kata(tmp_path)
    (folder / "problems" / "30-train-loop").mkdir()
    shutil.copy(loop, folder / "problems" / "30-train-loop" / "solution.py")
    shutil.rmtree(folder / ".gpt-kata")
    record_passing_references(folder)
    return folder


def expected_run() -> tuple[list[tuple[int, float, float]], dict[str, torch.Tensor]]:
    data, config, model, optimizer = training_start(SEED)
    split = int(0.9 * len(data))
    loop = module_from(ROOT / "solutions" / "30-train-loop" / "solution.py", "expected_loop")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the run's thread count, so that sums run in the same order
    try:
        log = loop.Solution().train_loop(
            model, optimizer, data[:split], data[split:], torch.Generator().manual_seed(SEED),
            torch.Generator().manual_seed(1), steps=STEPS, batch_size=64,
            context_length=config.context_length, max_lr=3e-3, min_lr=3e-4,
            warmup_steps=STEPS - 1, max_norm=1.0, eval_every=100, eval_batches=8)
    finally:
        torch.set_num_threads(threads)
    return log, model.state_dict()


def test_a_passing_loop_trains_your_gpt_with_your_loop(tmp_path):
    folder = with_loop(tmp_path, ROOT / "solutions" / "30-train-loop" / "solution.py")
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--steps", str(STEPS), "--seed", str(SEED),
                    "--threads", "1", "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert "training with your train_loop (problem 30)" in done.stderr
    assert "your train_step (problem 25)" not in done.stderr
    log, weights = expected_run()
    rows = [row.split("\t") for row in (run / "loss_log.tsv").read_text().splitlines()[1:]]
    assert [int(row[0]) for row in rows] == [0, STEPS] == [entry[0] for entry in log]
    for row, (_, train_loss, val_loss) in zip(rows, log, strict=True):
        assert (row[1], row[2]) == (f"{train_loss:.4f}", f"{val_loss:.4f}")
    assert log[-1][1] < log[0][1] - 0.5  # it learned
    written = load_file(str(run / "model.safetensors"))
    assert written.keys() == weights.keys()
    for name, tensor in weights.items():
        torch.testing.assert_close(written[name], tensor, rtol=1e-4, atol=1e-5, msg=name)
    # A loop gives its evaluations, not each step's loss.
    assert (run / "step_losses.tsv").read_text() == "step\tloss\n"


def test_an_unfinished_loop_trains_with_your_step_and_says_so(tmp_path):
    folder = with_loop(tmp_path, ROOT / "data" / "starters" / "30-train-loop" / "solution.py")
    run = tmp_path / "run"
    done = gpt_kata(folder, "train", "--yours", "--steps", "3", "--threads", "1",
                    "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert "training with your train_step (problem 25) in the grader's loop" in done.stderr
    assert "your train_loop (problem 30)" not in done.stderr
    rows = (run / "step_losses.tsv").read_text().splitlines()
    assert len(rows) == 4  # the header and each step's loss, from the learner's step
