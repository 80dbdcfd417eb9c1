"""The shipped modern model (data/llama.safetensors): what it holds, that it writes as well
as the shipped GPT, and that the maintainer's training makes it."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from grader.grading.contracts.declaring import load_check_module
from grader.grading.subject.reference import load_reference
from grader.grading.values.equality import same_outcome
from grader.model import artifacts
from grader.model.config import MODERN_SETTINGS, TrainSettings
from grader.model.corpus import generate_corpus, well_formed_fraction
from grader.model.llama import Llama, LlamaConfig
from grader.model.training import train
from grader.registry import problems
from grader.sandbox.wire.encoding import decode


def sample(model: torch.nn.Module, chars: int, seed: int = 0) -> str:
    """`chars` characters after a newline, drawn at temperature 1 by one generator seeded
    once, the context cropped to the model's window: as the GPT's check samples."""
    vocab = artifacts.load_vocab()
    generator = torch.Generator().manual_seed(seed)
    context = artifacts.encode("\n", vocab)
    n = model.context_length
    ids = []
    with torch.no_grad():
        for _ in range(chars):
            probs = torch.softmax(model(context[:, -n:])[:, -1, :], dim=-1)
            token = torch.multinomial(probs, 1, generator=generator)
            context = torch.cat([context[:, -n:], token], dim=1)
            ids.append(int(token))
    return "".join(vocab[i] for i in ids)


def test_the_checkpoint_is_a_llama_of_its_config_on_the_gpts_vocabulary() -> None:
    config = artifacts.load_llama_config()
    assert config.vocab_size == len(artifacts.load_vocab())
    assert config.context_length == artifacts.load_config().context_length
    assert config.n_kv_head < config.n_head  # grouped-query attention, not multi-head
    tensors = load_file(str(artifacts.LLAMA_CHECKPOINT))
    assert set(tensors) == set(Llama(config).state_dict())
    assert all(t.dtype == torch.float32 for t in tensors.values())
    # Trained, not as initialised: an untrained head is N(0, 0.02).
    assert tensors["lm_head.weight"].std() > 0.1
    assert not torch.equal(tensors["lm_head.weight"], tensors["embed_tokens.weight"])


def test_the_shipped_modern_model_writes_well_formed_sentences() -> None:
    """Seeded once, never reset: at least 95% of the sentences it samples are grammatical,
    the shipped GPT's bar (tests/test_train.py)."""
    torch.set_num_threads(1)
    good, total = well_formed_fraction(sample(artifacts.load_llama(), 6000))
    assert total >= 150
    assert good / total >= 0.95, f"{good}/{total} well formed"


def test_an_untrained_llama_does_not_reach_the_bar() -> None:
    """The bar tells a trained model from one that is not."""
    torch.manual_seed(0)
    model = Llama(artifacts.load_llama_config()).eval()
    # 700 characters make 47 sentences, none well formed (2,000 made 144, none either).
    good, total = well_formed_fraction(sample(model, 700))
    assert total >= 30 and good / total < 0.5, (good, total)


def test_training_takes_a_llama_config(tmp_path) -> None:
    text = generate_corpus(seed=3, target_bytes=4000)
    tiny = LlamaConfig(vocab_size=0, context_length=16, n_layer=1, n_head=2, n_kv_head=1,
                       n_embd=16, n_hidden=32)
    train(text, tmp_path, config=tiny, settings=TrainSettings(steps=20, batch_size=8,
                                                             eval_every=10, threads=1),
          show_progress=False)
    model = artifacts.load_llama(tmp_path / "model.safetensors", tmp_path / "config.json")
    assert model.config == LlamaConfig(**{**tiny.to_dict(), "vocab_size": len(set(text))})
    log = (tmp_path / "loss_log.tsv").read_text().splitlines()
    assert float(log[-1].split("\t")[1]) < float(log[1].split("\t")[1])


def sums_as_the_goldens_machine() -> bool:
    """Whether this machine gives the modern model's goldens bit for bit. Its platform's
    name is not enough: a CPU of the goldens' capability may sum in another order (an
    AMD EPYC with AVX2 differs from them in the last bits, within the grade's rounding),
    and then no training run can repeat the shipped weights exactly."""
    if not artifacts.goldens_platform_matches():
        return False
    problem = next(p for p in problems() if p.slug == "modern-gpt")
    goldens = artifacts.load_goldens()[problem.slug]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the goldens were made
    try:
        answers = load_check_module(problem).CONTRACT.reference_answers(load_reference(problem))
    finally:
        torch.set_num_threads(threads)
    return all(same_outcome(("value", decode(goldens[case])), ("value", live))
               for case, live in answers.items())


@pytest.mark.trains
def test_the_maintainers_training_makes_the_shipped_modern_model(tmp_path) -> None:
    """`make_data modern-model`'s training, run again: on a machine that gives the goldens
    bit for bit, the same weights bit for bit; anywhere, a model that reaches the bar."""
    corpus = artifacts.CORPUS.read_text(encoding="utf-8")
    model = train(corpus, tmp_path, config=LlamaConfig(vocab_size=2),
                  settings=MODERN_SETTINGS, show_progress=False)
    good, total = well_formed_fraction(sample(model, 6000))
    assert total >= 150 and good / total >= 0.95, f"{good}/{total} well formed"
    if sums_as_the_goldens_machine():
        made = load_file(str(tmp_path / "model.safetensors"))
        shipped = load_file(str(artifacts.LLAMA_CHECKPOINT))
        assert made.keys() == shipped.keys()
        assert all(torch.equal(made[k], shipped[k]) for k in made)
