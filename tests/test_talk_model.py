"""`gpt-kata talk --model RUN`: a run written by `train` talks through problem 16's
sample_text() (with a fresh seed it names), generate() and stream_generate().

The run's weights are read by the grader only; the learner's code, sandboxed, is
given a model whose forward passes the grader serves. The expected text is
always computed here, in-process, from the run's files loaded independently of
the code under test.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
import torch
from conftest import examples
from learner import learner_kata
from safetensors.torch import load_file, save_file

from grader.cli.main import main
from grader.model.gpt import GPT, GPTConfig
from grader.model.spec import ModelSpec
from grader.model.training import TrainSettings, train
from grader.registry import find
from grader.sandbox.wire.encoding import ProtocolError, decode, encode

# A corpus of its own, so the run's vocabulary is not the shipped one: no 'A', no 'z'.
TEXT = "Tom had a red ball. Lily saw the cat. The dog ran home.\n" * 60
TINY = GPTConfig(vocab_size=0, context_length=16, n_layer=1, n_head=2, n_embd=16)
QUICK = TrainSettings(steps=20, batch_size=8, eval_every=10, threads=1)
LEARNER = examples("generate") / "well_known_style.py"
LEARNER_SAMPLER = examples("sampler") / "float64_descending.py"
SEED = re.compile(r"; seed (\d+): `--seed \1` gives this text again\]$")


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    train(TEXT, folder, config=TINY, settings=QUICK, show_progress=False)
    return folder


def expected_text(folder: Path, prompt: str, chars: int) -> str:
    """The reference generate() on the run's model, built here from its files."""
    from grader.grading.subject.reference import load_reference

    config = GPTConfig(**json.loads((folder / "config.json").read_text()))
    model = GPT(config)
    model.load_state_dict(load_file(str(folder / "model.safetensors")))
    model.eval()
    vocab = {int(i): c for i, c in json.loads((folder / "vocab.json").read_text()).items()}
    lookup = {c: i for i, c in vocab.items()}
    context = torch.tensor([[lookup[c] for c in prompt]])
    torch.set_num_threads(1)
    return prompt + load_reference(find("generate")).generate(
        model, chars, context, config.context_length, vocab)


def sampled_text(folder: Path, prompt: str, chars: int, seed: int) -> str:
    """The reference sample_text() with talk's defaults (temperature 1, no filters)
    and `seed`, on the run's model built here from its files."""
    from grader.grading.subject.reference import load_reference

    config = GPTConfig(**json.loads((folder / "config.json").read_text()))
    model = GPT(config)
    model.load_state_dict(load_file(str(folder / "model.safetensors")))
    vocab = {int(i): c for i, c in json.loads((folder / "vocab.json").read_text()).items()}
    lookup = {c: i for i, c in vocab.items()}
    context = torch.tensor([[lookup[c] for c in prompt]])
    torch.set_num_threads(1)
    return prompt + load_reference(find("sampler")).sample_text(
        model.eval(), context, chars, config.context_length, vocab, 1.0, 0, 1.0, 0, None, seed)


FRESH: Path | None = None


@pytest.fixture(scope="module", autouse=True)
def _fresh_learner(tmp_path_factory) -> None:
    """The folder talk runs in by default: a learner who has solved nothing. The
    repository's problems/ are whoever works through the kata, and a sampler solved
    there would be the one talk uses."""
    global FRESH
    FRESH = learner_kata(tmp_path_factory.mktemp("fresh"))


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    # stderr into stdout, in the order written, to see where the label lands
    return subprocess.run([sys.executable, "-m", "grader", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600,
                          cwd=cwd or FRESH)


def label_and_text(output: str) -> tuple[str, str]:
    lines = output.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("["))
    return lines[at], "\n".join(lines[at + 1:]).removesuffix("\n")


def test_talk_with_a_run_samples_the_reference_text_of_that_model_with_the_seed_it_names(
        run):
    """Not generate(), whose generator is put back after every draw, so that the same
    draw picks every character and the text repeats: sample_text() seeded once."""
    done = cli("talk", "Tom", "--chars", "30", "--model", str(run))
    assert done.returncode == 0, done.stdout
    label, text = label_and_text(done.stdout)
    assert label.startswith("[the reference sample_text() from 16-sampler"), label
    assert f"the model trained in {run.resolve()}" in label
    seed = int(SEED.search(label).group(1))
    assert text == sampled_text(run, "Tom", 30, seed)
    again = cli("talk", "Tom", "--chars", "30", "--model", str(run), "--seed", str(seed))
    assert label_and_text(again.stdout)[1] == text


def test_plain_talk_does_not_go_round_in_circles():
    """The shipped model's 600 characters from one seed: many different sentences, where
    generate()'s one draw for every character repeats a few over and over."""
    done = cli("talk", "Once upon a time,", "--chars", "600", "--seed", "0")
    assert done.returncode == 0, done.stdout
    sentences = re.split(r"(?<=[.!?])\s+", label_and_text(done.stdout)[1])
    assert len(sentences) >= 15
    assert len(set(sentences)) >= 0.8 * len(sentences), sentences
    # Without --seed, talk draws one, names it, and samples the same way: the text
    # is the one that seed gives, whatever seed was drawn.
    plain = cli("talk", "Once upon a time,", "--chars", "600")
    assert plain.returncode == 0, plain.stdout
    label, text = label_and_text(plain.stdout)
    assert label.startswith("[the reference sample_text() from 16-sampler"), label
    seed = SEED.search(label).group(1)
    again = cli("talk", "Once upon a time,", "--chars", "600", "--seed", seed)
    assert label_and_text(again.stdout)[1] == text


def test_your_passing_sampler_talks_with_a_run_served_by_the_grader(run, tmp_path):
    """A learner's kata folder: talk grades their sampler, then runs it sandboxed."""
    kata = tmp_path / "kata"
    (kata / "problems" / "16-sampler").mkdir(parents=True)
    shutil.copy(LEARNER_SAMPLER, kata / "problems" / "16-sampler" / "solution.py")
    done = cli("talk", "Lily", "--chars", "25", "--model", str(run), cwd=kata)
    assert done.returncode == 0, done.stdout
    label, text = label_and_text(done.stdout)
    assert label.startswith("[your sample_text()"), label
    assert text == sampled_text(run, "Lily", 25, int(SEED.search(label).group(1)))


def test_a_streamed_learner_generator_is_served_live(run):
    from grader.learner.tools.talk import Implementation, choose_model, streamed
    from grader.model import artifacts
    from grader.sandbox.host.pool import WorkerPool
    from grader.sandbox.wire.limits import Limits

    talker = choose_model(str(run))
    context = artifacts.encode("Tom", talker.int_to_char)
    args = argparse.Namespace(chars=20, stream="word")
    with WorkerPool(sandbox=Limits()) as pool:
        learner = Implementation(find("stream"), True, pool, witnessed=True,
                                 path=find("stream").reference)
        chunks = list(streamed(args, context, talker, learner))
    assert "Tom" + "".join(chunks) == expected_text(run, "Tom", 20)


def test_your_sample_text_samples_a_run_served_by_the_grader(run):
    from grader.grading.subject.reference import load_reference
    from grader.learner.tools.talk import Implementation, choose_model, sampled
    from grader.model import artifacts
    from grader.sandbox.host.pool import WorkerPool
    from grader.sandbox.wire.limits import Limits

    talker = choose_model(str(run))
    context = artifacts.encode("Tom", talker.int_to_char)
    args = argparse.Namespace(chars=30, temperature=0.8, top_k=5, top_p=None,
                              no_repeat_ngram=None, seed=4, stream=None)
    with WorkerPool(sandbox=Limits()) as pool:
        learner = Implementation(find("sampler"), True, pool, witnessed=True,
                                 path=find("sampler").reference)
        text = "".join(sampled(args, context, talker, learner, None, args.seed))
    config = GPTConfig(**json.loads((run / "config.json").read_text()))
    model = GPT(config)
    model.load_state_dict(load_file(str(run / "model.safetensors")))
    expected = load_reference(find("sampler")).sample_text(
        model.eval(), context, 30, config.context_length, talker.int_to_char, 0.8, 5, 1.0, 0,
        None, 4)
    assert text == expected and len(text) == 30


def test_without_a_fork_server_the_reference_talks_with_a_run_and_says_why(
        run, monkeypatch, capsys):
    """A worker started on its own has no witness: it could only read the run itself."""
    import grader.learner.tools.talk as talk
    from grader.sandbox.host.pool import WorkerPool

    monkeypatch.setattr(talk, "current_status", lambda problem, pool: "pass")
    pool = WorkerPool(fork=False)
    chosen = talk.choose("generate", pool, talk.choose_model(str(run)), 200)
    assert not chosen.use_learner and "on Linux" in capsys.readouterr().err
    assert talk.choose("generate", pool, talk.choose_model("shipped"), 200).use_learner


PEEKS = """
class Solution:
    def generate(self, model, new_chars, context, context_length, int_to_char):
        try:
            open({weights!r}, "rb").read(1)
            read = "read"
        except OSError:
            read = "denied"
        return type(model).__name__ + ":" + read
"""


def test_the_sandboxed_code_is_given_the_runs_model_calls_but_cannot_read_its_weights(
        run, tmp_path):
    from grader.learner.tools.talk import choose_model
    from grader.model import artifacts
    from grader.sandbox.host.pool import WorkerPool
    from grader.sandbox.host.process import SubmissionProcess
    from grader.sandbox.wire.limits import Limits

    talker = choose_model(str(run))
    peek = tmp_path / "peek" / "solution.py"
    peek.parent.mkdir()
    peek.write_text(PEEKS.format(weights=str(run / "model.safetensors")))
    with WorkerPool(sandbox=Limits()) as pool:
        process = SubmissionProcess(str(peek), "Solution", ["generate"], pool, witnessed=True)
        outcome = process.call("generate", (talker.spec, 1, artifacts.encode(
            "Tom", talker.int_to_char), talker.context_length, talker.int_to_char))
        process.close()
        layers = pool.layers
    if not any(layer.startswith("landlock") for layer in layers):
        pytest.skip(f"no Landlock here (layers: {layers})")
    assert outcome.error is None, outcome.error
    assert outcome.result == "RemoteModel:denied"


def test_a_worker_refuses_to_build_a_run(run):
    """Only the grader reads a run's weights; asked to build one, a worker says so."""
    from grader.learner.tools.talk import choose_model
    from grader.model import artifacts
    from grader.sandbox.worker.serve import WorkerLoop

    talker = choose_model(str(run))
    worker = WorkerLoop()
    assert worker.load(str(LEARNER), "Solution", ["generate"]) == {"ok": True}
    reply = worker.call("generate", [talker.spec, 5, artifacts.encode("Tom", talker.int_to_char),
                                     talker.context_length, talker.int_to_char], {}, [])
    assert reply["error"]["type"] == "ModelRefused"
    assert "read by the grader only" in reply["error"]["message"]


def test_a_run_spec_crosses_the_protocol_with_its_folder():
    spec = ModelSpec("run", {"vocab_size": 5, "context_length": 8}, 0, "/runs/mine")
    assert decode(msgspec.msgpack.decode(msgspec.msgpack.encode(encode(spec)))) == spec
    forged = {"type": "model", "kind": "run", "config": {}, "seed": 0, "path": ["/etc"]}
    with pytest.raises(ProtocolError):
        decode(forged)


def talk_usage_error(capsys, *args: str) -> str:
    assert main(["talk", "Tom", "--chars", "5", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("gpt-kata talk: "), err
    assert "Traceback" not in err
    return err


def test_a_prompt_character_outside_the_runs_vocabulary_is_refused(run, capsys):
    assert main(["talk", "Anna", "--model", str(run)]) == 2
    err = capsys.readouterr().err
    assert "'A'" in err and "the model trained in" in err and "Traceback" not in err


def broken(run: Path, tmp_path: Path, how: str) -> Path:
    """A copy of the run, spoiled in one way."""
    folder = tmp_path / how
    shutil.copytree(run, folder)
    config = json.loads((folder / "config.json").read_text())
    if how == "unfinished":  # train writes loss_log.tsv first and the model at the end
        for name in ("model.safetensors", "config.json", "vocab.json"):
            (folder / name).unlink()
    elif how == "no-vocab":
        (folder / "vocab.json").unlink()
        (folder / "loss_log.tsv").unlink()
    elif how == "corrupt-weights":
        (folder / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not")
    elif how == "truncated-weights":
        data = (folder / "model.safetensors").read_bytes()
        (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    elif how == "config-not-weights":
        (folder / "config.json").write_text(json.dumps({**config, "n_embd": 32}))
    elif how == "config-unknown-size":
        (folder / "config.json").write_text(json.dumps({**config, "dropout": 1}))
    elif how == "config-not-json":
        (folder / "config.json").write_text("{vocab_size: 12")
    elif how == "vocab-short":
        vocab = json.loads((folder / "vocab.json").read_text())
        vocab.pop(str(len(vocab) - 1))
        (folder / "vocab.json").write_text(json.dumps(vocab))
    elif how == "nan-weights":
        weights = load_file(str(folder / "model.safetensors"))
        weights["head.weight"][0, 0] = float("nan")
        save_file(weights, str(folder / "model.safetensors"))
    return folder


@pytest.mark.parametrize("how, words", [
    ("unfinished", "training has not finished"),
    ("no-vocab", "not a run written by `gpt-kata train` (no vocab.json)"),
    ("corrupt-weights", "not a readable safetensors file"),
    ("truncated-weights", "not a readable safetensors file"),
    ("config-not-weights", "but config.json makes it"),
    ("config-unknown-size", "is not a model config"),
    ("config-not-json", "cannot be read as JSON"),
    ("vocab-short", "config.json says vocab_size"),
    ("nan-weights", "NaN or infinite"),
])
def test_a_bad_run_is_a_one_line_usage_error(run, tmp_path, capsys, how, words):
    assert words in talk_usage_error(capsys, "--model", str(broken(run, tmp_path, how)))


def test_a_missing_run_or_a_file_is_a_one_line_usage_error(run, tmp_path, capsys):
    assert "no such folder" in talk_usage_error(capsys, "--model", str(tmp_path / "nowhere"))
    assert "is not a folder" in talk_usage_error(capsys, "--model",
                                                 str(run / "model.safetensors"))


def test_model_shipped_is_the_default():
    from grader.cli.main import build_parser

    assert build_parser().parse_args(["talk", "Tom"]).model == "shipped"
    # And the shipped model talks, through the command as a learner runs it.
    shipped = cli("talk", "Tom", "--chars", "20", "--model", "shipped", "--seed", "3")
    assert shipped.returncode == 0, shipped.stdout + shipped.stderr
    assert label_and_text(shipped.stdout)[1].startswith("Tom")
