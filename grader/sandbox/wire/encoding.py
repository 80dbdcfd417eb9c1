"""What crosses between the grader and a submission's worker process: the values.

Plain JSON, framed by a 4-byte length (grader.sandbox.wire.frames). Tensors travel as
dtype, shape and raw bytes; models travel as a description (`ModelSpec`) that each
side builds for itself. Nothing is ever unpickled, so a hostile worker can send back
data but never code.

The worker runs untrusted code, and that code can write frames of its own to the
channel. So everything that comes back is checked before the grader builds anything
from it: frame size, nesting depth, list, dict and string sizes, tensor dtypes and
shapes, generator states (here), and the shape of each reply (grader.sandbox.wire.replies).
A reply that fails a check raises `ProtocolError` with a short reason;
`replies.unreadable()` turns that into the learner's message. `encode` applies the
same limits on the worker's side, so an honest submission's odd return value is
refused there, with a message about the value, before it is ever sent.
"""

from __future__ import annotations

import base64
import binascii
import functools
import itertools
import math
from typing import Any

from grader.locale import tr
from grader.model.spec import ModelSpec

# Limits on what one message may hold. Honest messages stay far below each one;
# they exist so that a forged reply cannot make the grader recurse, allocate
# gigabytes or loop over millions of entries before it notices.
MAX_DEPTH = 64  # lists, dicts and tagged values inside one another
MAX_ITEMS = 1_000_000  # entries of one list or dict
MAX_STRING = 1_000_000  # characters of one string
MAX_DIMS = 16  # dimensions of one tensor
MAX_ELEMENTS = 1 << 24  # entries of one tensor: 64 MB of float32

# Dtypes a tensor may travel as: the plain numeric ones. Complex, quantized and
# the many exotic float8 kinds have no use here and no safe byte layout to trust.
TENSOR_DTYPES = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64",
                           "float16", "bfloat16", "float32", "float64"})


class ProtocolError(Exception):
    """The other side sent something that is not a valid message."""


MODEL_KINDS = ("shipped", "random", "run", "yours", "hidden", "modern")
MAX_MODEL_PATH = 4096  # characters of a run's folder name
MAX_MODEL_SIZE = 1 << 20  # any one entry of a model's config


class Unencodable(TypeError):
    """A value of a type the protocol does not carry."""


def encode(value: Any) -> Any:
    """`value` as JSON-ready data; Unencodable if the protocol cannot carry it."""
    return _encode(value, 0)


def _encode(value: Any, depth: int) -> Any:
    import torch  # only here, so that importing the protocol stays cheap

    if depth > MAX_DEPTH:
        raise Unencodable(tr("values nested more than {depth} levels deep", depth=MAX_DEPTH))
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise Unencodable(tr("a str of {size} characters (at most {most} can be sent)",
                                 size=len(value), most=MAX_STRING))
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if isinstance(value, torch.Tensor):
        return {"__tensor__": _encode_tensor(value)}
    if isinstance(value, torch.Generator):
        return {"__generator__": _encode(value.get_state(), depth + 1)}
    if isinstance(value, ModelSpec):
        described = {"kind": value.kind, "config": value.config, "seed": value.seed}
        if value.path:
            described["path"] = value.path
        return {"__model__": described}
    if isinstance(value, (list, tuple)):
        # islice: a list subclass may claim any length or iterate for ever.
        items = list(itertools.islice(value, MAX_ITEMS + 1))
        if len(items) > MAX_ITEMS:
            raise Unencodable(tr("a {type} of more than {most} items",
                                 type=type(value).__name__, most=MAX_ITEMS))
        return {"__list__": [_encode(v, depth + 1) for v in items],
                "tuple": isinstance(value, tuple)}
    if isinstance(value, dict):
        pairs = list(itertools.islice(value.items(), MAX_ITEMS + 1))
        if len(pairs) > MAX_ITEMS:
            raise Unencodable(tr("a dict of more than {most} items", most=MAX_ITEMS))
        return {"__dict__": [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in pairs]}
    raise Unencodable(tr("a value of type {type}", type=type(value).__name__))


def _encode_tensor(value: Any) -> dict[str, Any]:
    import torch

    dtype = str(value.dtype).removeprefix("torch.")
    if dtype not in TENSOR_DTYPES:
        raise Unencodable(tr("a tensor of dtype {dtype}", dtype=dtype))
    if value.layout != torch.strided:
        raise Unencodable(tr("a {layout} tensor; call .to_dense() first",
                             layout=str(value.layout).removeprefix("torch.")))
    if value.dim() > MAX_DIMS:
        raise Unencodable(tr("a tensor of {count} dimensions (at most {most})",
                             count=value.dim(), most=MAX_DIMS))
    if value.numel() > MAX_ELEMENTS:
        raise Unencodable(tr("a tensor of {count} elements (at most {most})",
                             count=value.numel(), most=MAX_ELEMENTS))
    try:
        t = value.detach().cpu().contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes()
    except Exception as exc:  # noqa: BLE001 - meta tensors, odd subclasses: all refused alike
        raise Unencodable(tr("a tensor whose data cannot be read ({error})",
                             error=type(exc).__name__)) from None
    return {"dtype": dtype, "shape": list(t.shape), "data": base64.b64encode(raw).decode()}


# --- decoding: everything here may come from a hostile process ------------------------
def decode(value: Any) -> Any:
    """The value `encode` made, rebuilt; ProtocolError if it breaks any rule."""
    try:
        return _decode(value, 0)
    except ProtocolError:
        raise
    except RecursionError:
        raise ProtocolError(f"values nested more than {MAX_DEPTH} levels deep") from None
    except (ArithmeticError, LookupError, MemoryError, RuntimeError, TypeError,
            ValueError) as exc:
        # Every known way is checked above; this is the backstop for an unknown one,
        # so that a reply never turns into an internal error of the grader.
        raise ProtocolError(f"a value that cannot be rebuilt ({type(exc).__name__})") from None


def _decode(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise ProtocolError(f"values nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise ProtocolError(f"a string of {len(value)} characters (at most {MAX_STRING})")
        return value
    if isinstance(value, list):
        raise ProtocolError("bare JSON lists are not part of the protocol")
    if not isinstance(value, dict):
        raise ProtocolError(f"a JSON value of type {type(value).__name__}")
    if "__float__" in value:
        _keys(value, {"__float__"})
        text = value["__float__"]
        if text not in ("inf", "-inf", "nan"):
            raise ProtocolError(f"bad float {str(text)[:20]!r}")
        return float(text)
    if "__tensor__" in value:
        _keys(value, {"__tensor__"})
        return _decode_tensor(value["__tensor__"])
    if "__generator__" in value:
        _keys(value, {"__generator__"})
        return _decode_generator(_decode(value["__generator__"], depth + 1))
    if "__model__" in value:
        _keys(value, {"__model__"})
        return _decode_model(value["__model__"])
    if "__list__" in value:
        _keys(value, {"__list__"}, {"tuple"})
        items = [_decode(v, depth + 1) for v in _entries(value["__list__"], "list")]
        return tuple(items) if value.get("tuple") is True else items
    if "__dict__" in value:
        _keys(value, {"__dict__"})
        result = {}
        for pair in _entries(value["__dict__"], "dict"):
            if not isinstance(pair, list) or len(pair) != 2:
                raise ProtocolError("a dict entry that is not a [key, value] pair")
            key = _decode(pair[0], depth + 1)
            try:
                hash(key)
            except TypeError:
                raise ProtocolError(f"a dict key of type {type(key).__name__}") from None
            result[key] = _decode(pair[1], depth + 1)
        return result
    raise ProtocolError(f"unknown value with keys {sorted(map(str, value))[:5]!r}")


def _keys(value: dict, required: set[str], optional: set[str] = frozenset()) -> None:
    if not required <= value.keys() <= required | optional:
        raise ProtocolError(f"unexpected keys {sorted(map(str, value))[:5]!r}")


def _entries(value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise ProtocolError(f"a {what} whose entries are not a JSON list")
    if len(value) > MAX_ITEMS:
        raise ProtocolError(f"a {what} of {len(value)} entries (at most {MAX_ITEMS})")
    return value


def checked_int(value: Any, what: str, low: int, high: int) -> int:
    # bool is an int to Python but never a size or a seed.
    if type(value) is not int or not low <= value <= high:
        raise ProtocolError(f"{what} {str(value)[:30]} is not a whole number from {low} "
                            f"to {high}")
    return value


def _decode_tensor(spec: Any) -> Any:
    import torch

    if not isinstance(spec, dict):
        raise ProtocolError("a tensor description that is not an object")
    _keys(spec, {"dtype", "shape", "data"})
    name = spec["dtype"]
    if not isinstance(name, str) or name not in TENSOR_DTYPES:
        raise ProtocolError(f"tensor dtype {str(name)[:40]!r} is not one the grader reads")
    dtype = getattr(torch, name)
    shape = spec["shape"]
    if not isinstance(shape, list) or len(shape) > MAX_DIMS:
        raise ProtocolError(f"a tensor shape must be a list of at most {MAX_DIMS} sizes")
    if not all(type(size) is int for size in shape):
        raise ProtocolError("a tensor shape whose sizes are not all whole numbers")
    if any(size < 0 for size in shape):
        raise ProtocolError(f"tensor shape {shape} has a negative size")
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise ProtocolError(f"a tensor of {count} elements (at most {MAX_ELEMENTS})")
    if any(size > MAX_ELEMENTS for size in shape):
        # With a zero elsewhere there are no elements, but torch still refuses the size.
        raise ProtocolError(f"tensor shape {shape} has a size above {MAX_ELEMENTS}")
    data = spec["data"]
    if not isinstance(data, str):
        raise ProtocolError("tensor data that is not a base64 string")
    size = count * dtype.itemsize
    # Compared before decoding, so that no amount of junk data is ever decoded.
    if len(data) != 4 * math.ceil(size / 3):
        raise ProtocolError(f"tensor data of {len(data)} base64 characters does not match "
                            f"its shape {shape} and dtype {name}")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError("tensor data that is not valid base64") from None
    if len(raw) != size:
        raise ProtocolError(f"tensor data of {len(raw)} bytes does not match its shape "
                            f"{shape} and dtype {name}")
    if name == "bool":
        # Any byte but 0 and 1 in a bool tensor is undefined behaviour in torch.
        if not raw:
            return torch.empty(shape, dtype=torch.bool)
        return torch.frombuffer(bytearray(raw), dtype=torch.uint8).reshape(shape) != 0
    if not raw:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(raw), dtype=dtype).reshape(shape).clone()


@functools.cache
def generator_state_size() -> int:
    """Bytes of a CPU generator's state: fixed for this torch build."""
    import torch

    return torch.Generator().get_state().numel()


def _decode_generator(state: Any) -> Any:
    import torch

    size = generator_state_size()
    if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 or state.dim() != 1:
        raise ProtocolError("a generator state that is not a 1-d uint8 tensor")
    if state.numel() != size:
        raise ProtocolError(f"a generator state of {state.numel()} bytes (a CPU generator's "
                            f"is {size})")
    generator = torch.Generator()
    try:
        generator.set_state(state)
    except RuntimeError:
        raise ProtocolError("a generator state torch refuses") from None
    return generator


def _decode_model(spec: Any) -> ModelSpec:
    if not isinstance(spec, dict):
        raise ProtocolError("a model description that is not an object")
    _keys(spec, {"kind", "config", "seed"}, {"path"})
    kind, config = spec["kind"], spec["config"]
    if kind not in MODEL_KINDS:
        raise ProtocolError(f"model kind {str(kind)[:20]!r} is not one of {MODEL_KINDS}")
    if not isinstance(config, dict) or len(config) > 16:
        raise ProtocolError("a model config that is not an object of at most 16 sizes")
    sizes = {}
    for key, size in config.items():
        if len(key) > 64:
            raise ProtocolError("a model config name longer than 64 characters")
        sizes[key] = checked_int(size, f"model size {key[:64]}", 0, MAX_MODEL_SIZE)
    path = checked_text(spec.get("path"), "a model's folder", MAX_MODEL_PATH)
    seed = checked_int(spec["seed"], "model seed", -(2**63), 2**64 - 1)
    return ModelSpec(kind, sizes, seed, path)


def checked_text(value: Any, what: str, limit: int, default: str = "") -> str:
    """A string of at most `limit` characters, or `default` for None (the field left out)."""
    if value is None:
        return default
    if not isinstance(value, str):
        raise ProtocolError(f"{what} that is not a string")
    if len(value) > limit:
        raise ProtocolError(f"{what} of {len(value)} characters (at most {limit})")
    return value
