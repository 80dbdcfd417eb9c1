"""A run folder written by `gpt-kata train`, checked and loaded for `talk --model RUN`.

A run holds config.json, vocab.json and model.safetensors (written last, when
training ends) and loss_log.tsv (written from the first step). config.json says
which model the weights are for by its fields: GPTConfig's make a GPT
(grader/model/gpt.py), LlamaConfig's the modern decoder (grader/model/llama.py,
`train --model modern`). Each file is
checked against the others before anything is built from it, so that a bad
folder is a one-line message, never a traceback. Nothing here executes code:
JSON for the sizes and the vocabulary, safetensors for the weights.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from grader.locale import tr
from grader.model.config import GPTConfig, LlamaConfig
from grader.model.spec import ModelSpec

if TYPE_CHECKING:  # built where a run's model is, never imported for its files alone
    from grader.model.gpt import GPT
    from grader.model.llama import Llama

FILES = ("config.json", "vocab.json", "model.safetensors")
# Written instead of the model by a training run that failed, with the reason.
FAILED = "failed.txt"
# Far above any model trained here; it keeps a forged config from asking for
# gigabytes before the weights are even compared with it.
MAX_SIZE = 1 << 16


class RunError(ValueError):
    """A run folder that cannot be talked with, and why, in one line."""


def _dtype(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")


@dataclass(frozen=True)
class Run:
    folder: Path
    config: GPTConfig | LlamaConfig
    int_to_char: dict[int, str]
    model: GPT | Llama

    def spec(self) -> ModelSpec:
        """The description a worker is given: sizes and folder, never the weights."""
        return ModelSpec("run", sizes(self.config), 0, str(self.folder))


def sizes(config: GPTConfig | LlamaConfig) -> dict[str, int]:
    """A config's whole sizes: a model description carries no others (a modern model's
    rope_base and norm_eps stay in its folder's config.json, which only the grader reads)."""
    return {k: v for k, v in config.to_dict().items() if isinstance(v, int)}


def load_run(folder: Path) -> Run:
    """The run in `folder`, every file checked; RunError says what is wrong."""
    folder, config, int_to_char = run_files(folder)
    return Run(folder, config, int_to_char, read_model(folder / "model.safetensors", config))


def run_files(folder: Path) -> tuple[Path, GPTConfig | LlamaConfig, dict[int, str]]:
    """The run's folder, config and vocabulary, each file checked against the others
    but its weights, which are checked as they are loaded into a model (read_model, or
    in a learners' copy, which holds neither model's code, the learner's own)."""
    folder = folder.resolve()
    if not folder.exists():
        raise RunError(tr("{folder}: no such folder", folder=folder))
    if not folder.is_dir():
        raise RunError(tr("{folder} is not a folder; give the folder `gpt-kata train` wrote",
                          folder=folder))
    if (folder / FAILED).is_file():
        said = (folder / FAILED).read_text(encoding="utf-8", errors="replace").strip()
        reason = said.splitlines()[0][:300] if said else tr("no reason recorded")
        raise RunError(tr("{folder}: this training run failed ({reason}); train again",
                          folder=folder, reason=reason))
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing and (folder / "loss_log.tsv").is_file():
        raise RunError(tr("{folder}: training has not finished (no {files} yet); wait for "
                          "`gpt-kata train` to end, or train again", folder=folder,
                          files=", ".join(missing)))
    if missing:
        raise RunError(tr("{folder} is not a run written by `gpt-kata train` (no {files})",
                          folder=folder, files=", ".join(missing)))
    config = read_config(folder / "config.json")
    int_to_char = read_vocab(folder / "vocab.json")
    if len(int_to_char) != config.vocab_size:
        raise RunError(tr("{folder}: vocab.json has {chars} characters but config.json says "
                          "vocab_size {vocab_size}", folder=folder, chars=len(int_to_char),
                          vocab_size=config.vocab_size))
    return folder, config, int_to_char


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RunError(tr("{path} cannot be read as JSON ({error})", path=path,
                          error=type(exc).__name__)) from None


def read_config(path: Path) -> GPTConfig | LlamaConfig:
    """The GPT's or the modern decoder's config, told apart by exactly its fields."""
    raw = _json(path)
    gpt = {f.name for f in fields(GPTConfig)}
    llama = {f.name for f in fields(LlamaConfig)}
    if not isinstance(raw, dict) or set(raw) not in (gpt, llama):
        raise RunError(tr("{path} is not a model config: it needs exactly {gpt} (a GPT), "
                          "or {llama} (a modern GPT)", path=path, gpt=", ".join(sorted(gpt)),
                          llama=", ".join(sorted(llama))))
    floats = {f.name for f in fields(LlamaConfig) if f.type in (float, "float")}
    for name, value in raw.items():
        if name in floats:
            if type(value) not in (int, float) or not 0 < value < float("inf"):
                raise RunError(tr("{path}: {name} is {value}, not a positive number",
                                  path=path, name=name, value=repr(value)))
        elif type(value) is not int or not 1 <= value <= MAX_SIZE:
            raise RunError(tr("{path}: {name} is {value}, not a whole number from 1 to {most}",
                              path=path, name=name, value=repr(value), most=MAX_SIZE))
    if raw["n_embd"] % raw["n_head"]:
        raise RunError(tr("{path}: n_embd {n_embd} is not a multiple of n_head {n_head}",
                          path=path, n_embd=raw["n_embd"], n_head=raw["n_head"]))
    if set(raw) == gpt:
        return GPTConfig(**raw)
    if raw["n_head"] % raw["n_kv_head"]:
        raise RunError(tr("{path}: n_head {n_head} is not a multiple of n_kv_head "
                          "{n_kv_head}", path=path, n_head=raw["n_head"],
                          n_kv_head=raw["n_kv_head"]))
    if (raw["n_embd"] // raw["n_head"]) % 2:
        raise RunError(tr("{path}: the head size n_embd / n_head is odd; rotary positions "
                          "turn pairs of dimensions", path=path))
    return LlamaConfig(**{k: float(v) if k in floats else v for k, v in raw.items()})


def read_vocab(path: Path) -> dict[int, str]:
    raw = _json(path)
    if not isinstance(raw, dict) or not raw:
        raise RunError(tr("{path} is not a vocabulary: an object from ids to characters",
                          path=path))
    if sorted(raw) != sorted(str(i) for i in range(len(raw))):
        raise RunError(tr("{path}: the ids must be 0 to {last}, each once", path=path,
                          last=len(raw) - 1))
    chars = list(raw.values())
    if not all(isinstance(c, str) and len(c) == 1 for c in chars):
        raise RunError(tr("{path}: every id must map to exactly one character", path=path))
    if len(set(chars)) != len(chars):
        raise RunError(tr("{path}: a character appears under two ids", path=path))
    return {int(i): c for i, c in raw.items()}


def read_weights(path: Path) -> dict[str, torch.Tensor]:
    """A run's weights as saved, every one finite; RunError if not."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        weights = load_file(str(path))
    except (OSError, SafetensorError, ValueError) as exc:
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        raise RunError(tr("{path} is not a readable safetensors file ({reason})", path=path,
                          reason=reason)) from None
    for name, got in weights.items():
        if got.is_floating_point() and not bool(torch.isfinite(got).all()):
            raise RunError(tr("{path}: {name} holds NaN or infinite weights; the training "
                              "diverged, train again (a lower learning rate or another "
                              "seed)", path=path, name=name))
    return weights


def read_model(path: Path, config: GPTConfig | LlamaConfig) -> GPT | Llama:
    from grader.model.gpt import GPT
    from grader.model.llama import Llama

    weights = read_weights(path)
    model = Llama(config) if isinstance(config, LlamaConfig) else GPT(config)
    expected = model.state_dict()
    if set(weights) != set(expected):
        unknown = sorted(set(weights) ^ set(expected))[:3]
        what = tr("modern GPT") if isinstance(model, Llama) else "GPT"
        raise RunError(tr("{path} does not hold the weights of the {what} in config.json "
                          "(names that differ: {names})", path=path, what=what,
                          names=", ".join(unknown)))
    for name, tensor in expected.items():
        got = weights[name]
        if got.shape != tensor.shape or got.dtype != tensor.dtype:
            raise RunError(tr("{path}: {name} is {got} but config.json makes it {expected}",
                              path=path, name=name,
                              got=f"{_dtype(got)} {list(got.shape)}",
                              expected=f"{_dtype(tensor)} {list(tensor.shape)}"))
    model.load_state_dict(weights)
    return model.eval().requires_grad_(False)


# Runs checked and loaded in this process, by folder: talk checks a run before
# anything starts, and the witness and the reference then use that same model.
_LOADED: dict[str, Run] = {}


def open_run(folder: Path) -> Run:
    """`load_run`, once per folder in this process."""
    key = str(folder.resolve())
    if key not in _LOADED:
        _LOADED[key] = load_run(folder)
    return _LOADED[key]


def run_model(spec: ModelSpec) -> GPT | Llama:
    """The grader's model for a run spec, if the run still has the sizes the spec names."""
    run = open_run(Path(spec.path))
    if sizes(run.config) != spec.config:
        raise RunError(tr("{path} holds another model than the one described",
                          path=spec.path))
    return run.model
