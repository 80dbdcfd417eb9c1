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


# Four texts of 6,000 characters, about 880 sentences: one text (about 220) varies by
# several points from seed to seed. On an AMD EPYC (AVX2) this run wrote 93.9% of them
# well formed, and the shipped model 96.3% of the same four; one text of this run
# gave 92.3% to 97.0% over eight seeds, and against a bar of 95% it failed on one CPU
# of two. 90% keeps a margin of several of those spreads; a model that did not learn
# writes next to none (an untrained Llama: 0 of 47, tests/test_llama_checkpoint.py).
SEEDS = range(4)
BAR = 0.90


@pytest.mark.trains
def test_a_gpt_trained_by_your_code_writes_well_formed_sentences(tmp_path):
    """Trained with the references of 19, 23 and 25 for the default number of steps,
    and sampled through the reference sampler of 16 (four texts, seeded): at least 90%
    of the sentences it writes are grammatical, close to the shipped model's 96%."""
    folder = tmp_path / "kata"
    for name in ("06-generate", "16-sampler", "19-batches", "23-gpt", "25-train-step"):
        (folder / "problems" / name).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / name / "solution.py",
                    folder / "problems" / name / "solution.py")
    run = tmp_path / "run"
    trained = gpt_kata(folder, "train", "--yours", "--threads", "1", "--out", str(run))
    assert trained.returncode == 0, trained.stderr[-3000:]
    good = total = 0
    for seed in SEEDS:
        talked = gpt_kata(folder, "talk", PROMPT, "--model", str(run), "--chars", "6000",
                          "--temperature", "1", "--seed", str(seed))
        assert talked.returncode == 0, talked.stderr[-3000:]
        assert talked.stdout.startswith(PROMPT)
        text_good, text_total = well_formed_fraction(talked.stdout.removeprefix(PROMPT))
        assert text_total >= 150, talked.stdout[:500]
        good, total = good + text_good, total + text_total
    assert good / total >= BAR, f"{good}/{total} well formed"
