"""The shipped models as the statements' examples use them, in a copy without their code.

The examples reach into the shipped GPT (`model.blocks[0].ln_1`, a block's
attention and MLP, its embeddings) and run the shipped modern model. This copy
holds neither model's Python code (the GPT is problem 23's answer, the modern one
problem 35's). Here the parts torch has a layer for (embeddings, LayerNorms, the
output head) are torch's own layers with the shipped weights, and the others (each
block's attention and MLP) are programs the release exported. Nothing here
composes them: how a block or a GPT puts its parts together is for the learner to
write. The modern model is not here at all (its graph would show Track 4's
answers): a stand-in gives its logits on the prompts the examples give it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import torch
from gpt_kata_practice import codec
from gpt_kata_practice.codec import ExportedGPT, load_program

from grader.model import artifacts

HERE = Path(__file__).parent
# The release's name for the programs of the shipped GPT and its parts.
SHIPPED = "shipped"


class Program(torch.nn.Module):
    """One exported part, called as the part itself is (an attention returns its output
    and its keys and values), with its linear layers under their own names (`qkv`,
    `proj`, `fc`) and as its parameters, as torch's layers with the shipped weights."""

    def __init__(self, name: str, weights: dict[str, torch.Tensor], prefix: str) -> None:
        super().__init__()
        # Not a submodule: its parameters are the linear layers' below, counted once.
        self._program = (load_program(name).requires_grad_(False),)
        for key, weight in weights.items():
            layer = key.removeprefix(prefix).removesuffix(".weight")
            if key.startswith(prefix) and key.endswith(".weight") and "." not in layer:
                bias = weights.get(f"{prefix}{layer}.bias")
                linear = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
                linear.load_state_dict({"weight": weight, **({} if bias is None else
                                                             {"bias": bias})})
                self.add_module(layer, linear)

    def forward(self, *inputs: Any) -> Any:
        return self._program[0](*inputs)


class Parts(torch.nn.Module):
    """A block's parts under the shipped GPT's names (ln_1, attn, ln_2, mlp), and no
    forward of its own."""

    def __init__(self, index: int, n_embd: int, weights: dict[str, torch.Tensor]) -> None:
        super().__init__()
        here = f"blocks.{index}."
        self.ln_1 = layer_norm(n_embd, weights, here + "ln_1.")
        self.attn = Program(f"{SHIPPED}.{here}attn", weights, here + "attn.")
        self.ln_2 = layer_norm(n_embd, weights, here + "ln_2.")
        self.mlp = Program(f"{SHIPPED}.{here}mlp", weights, here + "mlp.")


def layer_norm(n_embd: int, weights: dict[str, torch.Tensor], prefix: str) -> torch.nn.LayerNorm:
    norm = torch.nn.LayerNorm(n_embd)
    norm.load_state_dict({"weight": weights[prefix + "weight"],
                          "bias": weights[prefix + "bias"]})
    return norm


@cache
def shipped_gpt() -> ExportedGPT:
    """The shipped GPT's program, with its parts under the GPT's own names."""
    config = artifacts.load_config()
    weights = artifacts.shipped_weights()[0]
    model = ExportedGPT(SHIPPED)
    model.token_embedding = torch.nn.Embedding.from_pretrained(
        weights["token_embedding.weight"], freeze=False)
    model.position_embedding = torch.nn.Embedding.from_pretrained(
        weights["position_embedding.weight"], freeze=False)
    model.blocks = torch.nn.ModuleList(Parts(i, config.n_embd, weights)
                                       for i in range(config.n_layer))
    model.ln_f = layer_norm(config.n_embd, weights, "ln_f.")
    model.head = torch.nn.Linear(config.n_embd, config.vocab_size, bias=False)
    model.head.load_state_dict({"weight": weights["head.weight"]})
    model.config = config
    return model.eval()


class StoredModern(torch.nn.Module):
    """The shipped modern model as far as the statements' examples run it: its logits
    on the prompts they give it, which the release stored (modern.json)."""

    def __init__(self) -> None:
        super().__init__()
        self.config = artifacts.load_llama_config()
        self.context_length = self.config.context_length
        stored = codec.decode(json.loads((HERE / "modern.json").read_text("utf-8")))
        self.known = list(zip(stored["inputs"], stored["outputs"]))

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        for ids, logits in self.known:
            if isinstance(context, torch.Tensor) and context.shape == ids.shape and bool(
                    torch.equal(context, ids)):
                return logits.clone()
        raise ValueError("this learners' copy holds the shipped modern model's logits on "
                         "the statements' prompts only, not the model itself (its code is "
                         "problem 35's answer): your instructor's copy of the kata runs it "
                         "on any prompt")


@cache
def modern_gpt() -> StoredModern:
    return StoredModern()
