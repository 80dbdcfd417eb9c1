"""The shipped files in `data/`: corpus, vocabulary, the two models' configs and
checkpoints, goldens.

Everything here loads without executing code: JSON for text and numbers,
safetensors for weights.
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import torch
from safetensors.torch import load_file, save_file

# The models' classes are imported where a model is built, not here: a worker that is
# handed no model holds this module (the shipped weights are read in the fork server)
# and must hold none of their code.
from grader.locale import tr
from grader.model.config import GPTConfig, LlamaConfig
from grader.model.spec import ModelSpec
from grader.paths import DATA

if TYPE_CHECKING:
    from grader.model.gpt import GPT
    from grader.model.llama import Llama

CORPUS = DATA / "corpus.txt"
VOCAB = DATA / "vocab.json"
CONFIG = DATA / "config.json"
CHECKPOINT = DATA / "model.safetensors"
GOLDENS = DATA / "goldens.json"
MANIFEST = DATA / "manifest.json"
# The modern decoder (grader/model/llama.py), trained on the same corpus and vocabulary.
LLAMA_CONFIG = DATA / "llama-config.json"
LLAMA_CHECKPOINT = DATA / "llama.safetensors"
SHIPPED_FILES = (CORPUS, VOCAB, CONFIG, CHECKPOINT, GOLDENS, LLAMA_CONFIG, LLAMA_CHECKPOINT)


class MissingDataError(RuntimeError):
    """The project's data folder is incomplete: the install is broken, not the learner."""


def _read_json(path: Path) -> dict:
    """A shipped JSON file's object."""
    if not path.is_file():
        raise MissingDataError(tr("{path} is missing: reinstall from a full clone of gpt-kata "
                                  "(pip install -e .)", path=path))
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(raw, dict)
    return raw


def split_corpus(text: str, context_length: int
                 ) -> tuple[dict[int, str], torch.Tensor, torch.Tensor]:
    """The vocabulary of `text`, and its encoding split nine tenths for training, one
    tenth for validation; ValueError if the text cannot train a model."""
    if len(set(text)) < 2:
        raise ValueError("the corpus needs at least two distinct characters")
    int_to_char = dict(enumerate(sorted(set(text))))
    lookup = char_to_int(int_to_char)
    data = torch.tensor([lookup[c] for c in text], dtype=torch.long)
    split = int(0.9 * len(data))
    if len(data) - split <= context_length + 1:
        raise ValueError(
            f"the corpus is too short: it needs more than {10 * (context_length + 2)} "
            "characters so that a tenth of it can hold a validation window"
        )
    return int_to_char, data[:split], data[split:]


def write_json(path: Path, value: object) -> None:
    """`value` as the files in data/ and a run's folder hold JSON."""
    path.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")


def save_vocab(int_to_char: dict[int, str], path: Path) -> None:
    write_json(path, {str(i): c for i, c in int_to_char.items()})


def corpus_text() -> str:
    """The shipped corpus, data/corpus.txt, as text."""
    return CORPUS.read_text(encoding="utf-8")


def load_vocab(path: Path = VOCAB) -> dict[int, str]:
    """`int_to_char` with integer keys (JSON object keys are always strings)."""
    return {int(i): c for i, c in _read_json(path).items()}


def load_config(path: Path = CONFIG) -> GPTConfig:
    return GPTConfig(**_read_json(path))


def save_model(model: GPT | Llama, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    write_json(directory / "config.json", model.config.to_dict())
    save_file({k: v.contiguous() for k, v in model.state_dict().items()},
              str(directory / "model.safetensors"))


Model = TypeVar("Model", bound=torch.nn.Module)


def _weights_of(checkpoint: Path) -> dict[str, torch.Tensor]:
    """A checkpoint's tensors; it is looked for first, as it is the file an incomplete
    install lacks."""
    if not checkpoint.is_file():
        raise MissingDataError(tr("{path} is missing: reinstall from a full clone of gpt-kata",
                                  path=checkpoint))
    return load_file(str(checkpoint))


def _with_weights(build: Callable[[], Model], weights: dict[str, torch.Tensor]) -> Model:
    """The model `build` makes, given `weights` (copied in) and ready to run."""
    model = build()
    model.load_state_dict(weights)
    return model.eval()


@cache
def shipped_weights() -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor] | None]:
    """The shipped GPT's and modern model's tensors (None for a copy without the
    latter), read once: the fork server reads them before any worker is forked."""
    modern = _weights_of(LLAMA_CHECKPOINT) if LLAMA_CHECKPOINT.is_file() else None
    return _weights_of(CHECKPOINT), modern


def load_model(checkpoint: Path = CHECKPOINT, config: Path = CONFIG) -> GPT:
    from grader.model.gpt import GPT

    return _with_weights(lambda: GPT(load_config(config)), _weights_of(checkpoint))


@cache
def shipped_model() -> GPT:
    from grader.model.gpt import GPT

    return _with_weights(lambda: GPT(load_config()), shipped_weights()[0])


def load_llama_config(path: Path = LLAMA_CONFIG) -> LlamaConfig:
    return LlamaConfig(**_read_json(path))


def load_llama(checkpoint: Path = LLAMA_CHECKPOINT, config: Path = LLAMA_CONFIG) -> Llama:
    from grader.model.llama import Llama

    return _with_weights(lambda: Llama(load_llama_config(config)), _weights_of(checkpoint))


@cache
def shipped_llama() -> Llama:
    """The shipped modern model: callers only read it."""
    from grader.model.llama import Llama

    weights = shipped_weights()[1]
    if weights is None:
        _weights_of(LLAMA_CHECKPOINT)  # raises MissingDataError, naming the file
    return _with_weights(lambda: Llama(load_llama_config()), weights)


@cache
def shipped_vocab() -> dict[int, str]:
    return load_vocab()


def char_to_int(int_to_char: dict[int, str]) -> dict[str, int]:
    return {c: i for i, c in int_to_char.items()}


def encode(text: str, int_to_char: dict[int, str]) -> torch.Tensor:
    """Text to a (1, T) LongTensor; unknown characters are a clear error."""
    lookup = char_to_int(int_to_char)
    unknown = sorted(set(text) - set(lookup))
    if unknown:
        raise ValueError(f"characters not in the model's vocabulary: {''.join(unknown)!r}")
    return torch.tensor([[lookup[c] for c in text]], dtype=torch.long)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def this_platform() -> dict[str, str]:
    """What decides whether float results can match bit for bit across machines."""
    return {
        "torch": torch.__version__,
        "machine": platform.machine(),
        "system": platform.system(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }


def load_manifest() -> dict:
    return _read_json(MANIFEST)


def write_manifest() -> dict:
    manifest = {
        "files": {p.name: sha256(p) for p in SHIPPED_FILES},
        "platform": this_platform(),
    }
    write_json(MANIFEST, manifest)
    return manifest


def goldens_platform_matches() -> bool:
    try:
        return load_manifest()["platform"] == this_platform()
    except MissingDataError:
        return False


@cache
def load_goldens() -> dict:
    return _read_json(GOLDENS)


_RANDOM_MODELS: dict[tuple, GPT] = {}


def random_model(config: dict[str, int], seed: int) -> GPT:
    """A small untrained GPT whose output head is scaled up so its next-token
    distributions are peaked like a trained model's, not nearly uniform.

    Built once per (config, seed): hypothesis asks for the same model many times
    while it shrinks. Callers only read it.
    """
    key = (tuple(sorted(config.items())), seed)
    if key not in _RANDOM_MODELS:
        _RANDOM_MODELS[key] = seeded(lambda: _sharpened(_gpt(config)), seed).eval()
    return _RANDOM_MODELS[key]


def _sharpened(model: GPT) -> GPT:
    with torch.no_grad():
        model.head.weight.normal_(0.0, 1.0)
    return model


def trainable_model(config: dict[str, int], seed: int) -> GPT:
    """A new GPT with the usual initialisation drawn from `seed`, in training mode.

    Built anew on every call, never shared and never remembered: training
    changes it, so two runs from the same seed must each start from their own.
    """
    return seeded(lambda: _gpt(config), seed).train()


def _gpt(config: dict[str, int]) -> GPT:
    from grader.model.gpt import GPT

    return GPT(GPTConfig(**config))


def seeded(build: Callable[[], Model], seed: int) -> Model:
    """What `build` makes, its random draws taken from `seed`, leaving the caller's
    random state as it was."""
    # Seeding the default generator directly gives the weights torch.manual_seed
    # gives, without the stack trace torch.manual_seed records on every call.
    generator = torch.random.default_generator
    state = generator.get_state()
    generator.manual_seed(seed)
    try:
        return build()
    finally:
        generator.set_state(state)


def build_model(spec: ModelSpec) -> GPT | Llama:
    if spec.kind == "shipped":
        return shipped_model()
    if spec.kind == "modern":
        return shipped_llama()
    if spec.kind == "random":
        return random_model(spec.config, spec.seed)
    if spec.kind == "hidden":
        # Drawn by this grader; a worker refuses (Worker.model).
        from grader.model.hidden_weights import hidden_model

        return hidden_model(spec)
    if spec.kind == "run":
        # Only the grader builds a run's model; a worker refuses (Worker.model).
        from grader.model.runs import run_model

        return run_model(spec)
    if spec.kind == "yours":
        # The learner's code runs in a sandboxed worker only (Worker.model).
        raise ValueError("the learner's own GPT is built only in a sandboxed worker")
    raise ValueError(f"unknown model kind {spec.kind!r}")
