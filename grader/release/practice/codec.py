"""Values as JSON: tensors by dtype, shape and bytes; generators by their state.

Written with sorted keys and no timestamps, so the same values always give the same file.
"""

from __future__ import annotations

import base64
import json
import math
from functools import cache
from pathlib import Path
from typing import Any

import torch

MODELS = Path(__file__).with_name("models")


class ExportedGPT(torch.nn.Module):
    """A GPT a case runs (the shipped one, or a seeded random one), from its exported
    program (no Python source of it here), refusing what the model refuses with the
    model's own kind of error."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.program = torch.export.load(MODELS / f"{name}.pt2").module()
        self.context_length = int(json.loads(Path(__file__).with_name("cases.json").read_text(
            "utf-8"))["models"][name]["context_length"])

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        if not isinstance(context, torch.Tensor) or context.dim() != 2 or (
                context.dtype != torch.long):
            got = (f"{context.dtype} of shape {tuple(context.shape)}"
                   if isinstance(context, torch.Tensor) else type(context).__name__)
            raise ValueError(f"the model takes token ids as a (B, T) LongTensor; got {got}")
        if not 1 <= context.shape[1] <= self.context_length:
            raise ValueError(f"the model reads 1 to context_length={self.context_length} "
                             f"tokens, but got {context.shape[1]}: crop the context to its "
                             f"last {self.context_length} tokens")
        return self.program(context)

    def train(self, mode: bool = True) -> ExportedGPT:
        # An exported program has no training mode (no dropout to switch): model.eval()
        # or model.train() only sets the flag.
        self.training = mode
        return self


@cache
def stored_model(name: str) -> torch.nn.Module:
    return ExportedGPT(name)


def encode(value: Any) -> Any:
    if type(value).__name__ == "StoredModel":  # made by the release, which the copy lacks
        return {"__model__": value.name}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, torch.Tensor):
        t = value.detach().contiguous().cpu()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        return {"__tensor__": {"dtype": str(t.dtype).removeprefix("torch."),
                               "shape": list(t.shape), "data": base64.b64encode(raw).decode()}}
    if isinstance(value, torch.Generator):
        return {"__generator__": encode(value.get_state())}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, (str, int, tuple)) for k in value):
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__}")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__model__" in value:
        return stored_model(value["__model__"])
    if "__float__" in value:
        return float(value["__float__"])
    if "__tensor__" in value:
        spec = value["__tensor__"]
        dtype = getattr(torch, spec["dtype"])
        raw = bytearray(base64.b64decode(spec["data"]))
        if not raw:
            return torch.empty(spec["shape"], dtype=dtype)
        return torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(spec["shape"]).clone()
    if "__generator__" in value:
        generator = torch.Generator()
        generator.set_state(decode(value["__generator__"]))
        return generator
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {decode(k): decode(v) for k, v in value["__dict__"]}
    raise ValueError(f"not a stored value: {sorted(value)}")
