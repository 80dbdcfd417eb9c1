"""The end of the Build the GPT track: a GPT trained by the learner's own code talks.

`gpt-kata train --yours` runs for its default length on one thread, then
`gpt-kata talk --model RUN` samples a long text through the learner's own sampler,
and the corpus' grammar checks it. Marked `trains`: the suite leaves it out, and it
runs on its own,
`python -m pytest -m trains`, as CI does after the suite.

One thread, not the default two: the tier's other test trains the modern model on
one thread beside it, and three threads on two cores wait on each other (the tier
took 15:05 with two, 9:47 with one, on a 2-core machine).
"""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT
from test_train_yours import gpt_kata

from grader.model.corpus import well_formed_fraction

PROMPT = "Once upon a time,"


@pytest.mark.trains
def test_a_gpt_trained_by_your_code_writes_well_formed_sentences(tmp_path):
    """Trained with the references of 19, 23 and 25 for the default number of steps,
    and sampled (seeded once) through the reference sampler of 16: at least 95% of
    the sentences it writes are grammatical, as the shipped model's are."""
    folder = tmp_path / "kata"
    for name in ("06-generate", "16-sampler", "19-batches", "23-gpt", "25-train-step"):
        (folder / "problems" / name).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / name / "solution.py",
                    folder / "problems" / name / "solution.py")
    run = tmp_path / "run"
    trained = gpt_kata(folder, "train", "--yours", "--threads", "1", "--out", str(run))
    assert trained.returncode == 0, trained.stderr[-3000:]
    talked = gpt_kata(folder, "talk", PROMPT, "--model", str(run), "--chars", "6000",
                      "--temperature", "1", "--seed", "0")
    assert talked.returncode == 0, talked.stderr[-3000:]
    assert talked.stdout.startswith(PROMPT)
    good, total = well_formed_fraction(talked.stdout.removeprefix(PROMPT))
    assert total >= 150, talked.stdout[:500]
    assert good / total >= 0.95, f"{good}/{total} well formed"
