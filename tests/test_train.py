"""Training: seeded and reproducible, writes what it promises; the shipped model writes well."""

from __future__ import annotations

import torch
from safetensors.torch import load_file

from grader.model import artifacts
from grader.model.corpus import generate_corpus, well_formed_fraction
from grader.model.gpt import GPTConfig
from grader.model.training import TrainSettings, train

TINY = GPTConfig(vocab_size=0, context_length=16, n_layer=1, n_head=2, n_embd=16)
QUICK = TrainSettings(steps=20, batch_size=8, eval_every=10, threads=1)


def test_training_writes_model_vocab_log_and_curve(tmp_path):
    text = generate_corpus(seed=3, target_bytes=4000)
    train(text, tmp_path, config=TINY, settings=QUICK, show_progress=False)
    for name in ("model.safetensors", "config.json", "vocab.json", "loss_log.tsv"):
        assert (tmp_path / name).is_file(), name
    assert (tmp_path / "loss_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    log = (tmp_path / "loss_log.tsv").read_text().splitlines()
    assert log[0].split("\t") == ["step", "train_loss", "val_loss", "elapsed_s"]
    first, last = float(log[1].split("\t")[1]), float(log[-1].split("\t")[1])
    assert last < first  # it learned something in 20 steps
    vocab = artifacts.load_vocab(tmp_path / "vocab.json")
    assert "".join(vocab.values()) == "".join(sorted(set(text)))


def test_training_is_reproducible_with_a_seed(tmp_path):
    text = generate_corpus(seed=4, target_bytes=3000)
    train(text, tmp_path / "a", config=TINY, settings=QUICK, show_progress=False)
    train(text, tmp_path / "b", config=TINY, settings=QUICK, show_progress=False)
    a = load_file(str(tmp_path / "a" / "model.safetensors"))
    b = load_file(str(tmp_path / "b" / "model.safetensors"))
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


@torch.no_grad()
def test_shipped_model_writes_well_formed_sentences():
    """Seeded once, never reset: at least 95% of the sentences it samples are grammatical."""
    torch.set_num_threads(1)
    model = artifacts.load_model()
    vocab = artifacts.load_vocab()
    generator = torch.Generator().manual_seed(0)
    context = artifacts.encode("\n", vocab)
    n = model.context_length
    ids = []
    for _ in range(6000):
        probs = torch.softmax(model(context[:, -n:])[:, -1, :], dim=-1)
        token = torch.multinomial(probs, 1, generator=generator)
        context = torch.cat([context[:, -n:], token], dim=1)
        ids.append(int(token))
    good, total = well_formed_fraction("".join(vocab[i] for i in ids))
    assert total >= 150
    assert good / total >= 0.95, f"{good}/{total} well formed"
