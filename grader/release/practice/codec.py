"""Values as JSON: tensors by dtype, shape and bytes; generators by their state.

Written with sorted keys and no timestamps, so the same values always give the same file.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import torch


def encode(value: Any) -> Any:
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
    if isinstance(value, dict) and all(isinstance(k, (str, int)) for k in value):
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__}")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
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
