"""What crosses between the grader and a submission's worker process.

Plain JSON, framed by a 4-byte length. Tensors travel as dtype, shape and raw
bytes; models travel as a description (`ModelSpec`) that each side builds for
itself. Nothing is ever unpickled, so a hostile worker can send back data but
never code.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from dataclasses import dataclass, field
from typing import IO, Any

MAX_FRAME = 64 * 1024 * 1024
HEADER = struct.Struct(">I")


class ProtocolError(Exception):
    """The other side sent something that is not a valid message."""


@dataclass(frozen=True)
class ModelSpec:
    """A model both sides can build identically: the shipped one or a seeded random one."""

    kind: str = "shipped"
    config: dict[str, int] = field(default_factory=dict)
    seed: int = 0

    def __repr__(self) -> str:
        if self.kind == "shipped":
            return "the shipped model"
        sizes = ", ".join(f"{k}={v}" for k, v in self.config.items())
        return f"random GPT({sizes}, seed={self.seed})"

    def key(self) -> tuple:
        return (self.kind, tuple(sorted(self.config.items())), self.seed)


def write_frame(stream: IO[bytes], message: dict) -> None:
    data = json.dumps(message, allow_nan=False).encode()
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> dict | None:
    """One message, or None at end of stream."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ProtocolError(f"message of {size} bytes is larger than the {MAX_FRAME} allowed")
    data = stream.read(size)
    if len(data) < size:
        return None
    try:
        message = json.loads(data)
    except ValueError as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    return message


class Unencodable(TypeError):
    """A value of a type the protocol does not carry."""


def encode(value: Any) -> Any:
    import torch  # only here, so that importing the protocol stays cheap

    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes()
        return {"__tensor__": {"dtype": str(t.dtype).removeprefix("torch."),
                               "shape": list(t.shape), "data": base64.b64encode(raw).decode()}}
    if isinstance(value, torch.Generator):
        return {"__generator__": encode(value.get_state())}
    if isinstance(value, ModelSpec):
        return {"__model__": {"kind": value.kind, "config": value.config, "seed": value.seed}}
    if isinstance(value, (list, tuple)):
        return {"__list__": [encode(v) for v in value], "tuple": isinstance(value, tuple)}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise Unencodable(f"a value of type {type(value).__name__}")


def decode(value: Any) -> Any:
    import torch

    if not isinstance(value, dict):
        if isinstance(value, list):
            raise ProtocolError("bare JSON lists are not part of the protocol")
        return value
    if "__float__" in value:
        text = value["__float__"]
        if text not in ("inf", "-inf", "nan"):
            raise ProtocolError(f"bad float {text!r}")
        return float(text)
    if "__tensor__" in value:
        spec = value["__tensor__"]
        dtype = getattr(torch, str(spec["dtype"]), None)
        if not isinstance(dtype, torch.dtype):
            raise ProtocolError(f"unknown tensor dtype {spec['dtype']!r}")
        shape = [int(s) for s in spec["shape"]]
        raw = base64.b64decode(spec["data"])
        if math.prod(shape) * dtype.itemsize != len(raw):
            raise ProtocolError("tensor bytes do not match its shape and dtype")
        if not raw:
            return torch.empty(shape, dtype=dtype)
        return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape).clone()
    if "__generator__" in value:
        generator = torch.Generator()
        generator.set_state(decode(value["__generator__"]))
        return generator
    if "__model__" in value:
        spec = value["__model__"]
        return ModelSpec(str(spec["kind"]), {str(k): int(v) for k, v in spec["config"].items()},
                         int(spec["seed"]))
    if "__list__" in value:
        items = [decode(v) for v in value["__list__"]]
        return tuple(items) if value.get("tuple") else items
    if "__dict__" in value:
        return {decode(k): decode(v) for k, v in value["__dict__"]}
    raise ProtocolError(f"unknown value {sorted(value)!r}")
