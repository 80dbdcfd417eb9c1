"""What crosses between the grader and a submission's worker process: the values.

Messages are msgpack (grader.sandbox.wire.frames). A value in one is plain data or one
of the tagged structs below: tensors travel as dtype, shape and raw bytes; models as a
description (`ModelSpec`) that each side builds for itself. Nothing is ever unpickled,
so a hostile worker can send back data but never code. The goldens (data/goldens.json)
hold the same structs as JSON, where bytes are base64.

The worker runs untrusted code, and that code can write frames of its own to the
channel. So everything that comes back is checked before the grader builds anything
from it: msgspec holds each value to its struct's types and limits (`Value`), and the
checks that span fields (a tensor's bytes against its shape, the nesting depth, a
generator's state, dict keys) are made here. A value that fails raises
`ProtocolError` with a short reason; `replies.unreadable()` turns that into the
learner's message. `encode` applies the same limits on the worker's side, so an
honest submission's odd return value is refused there, with a message about the
value, before it is ever sent.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Annotated, Any, Literal

import msgspec

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
MAX_MODEL_PATH = 4096  # characters of a run's folder name
MAX_MODEL_SIZE = 1 << 20  # any one entry of a model's config
MAX_DIGITS = 4300  # of an int beyond msgpack's 64 bits: Python's own limit on int("...")

# Dtypes a tensor may travel as: the plain numeric ones. Complex, quantized and
# the many exotic float8 kinds have no use here and no safe byte layout to trust.
TensorDtype = Literal["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                      "bfloat16", "float32", "float64"]
TENSOR_DTYPES = frozenset(TensorDtype.__args__)
ModelKind = Literal["shipped", "random", "run", "yours", "hidden", "modern"]


class ProtocolError(Exception):
    """The other side sent something that is not a valid message."""


class Unencodable(TypeError):
    """A value of a type the protocol does not carry."""


class Wire(msgspec.Struct, forbid_unknown_fields=True, tag_field="type"):
    """A tagged value: a field that is not its struct's refuses the whole message."""


class Tensor(Wire, tag="tensor"):
    dtype: TensorDtype
    shape: Annotated[list[Annotated[int, msgspec.Meta(ge=0, le=MAX_ELEMENTS)]],
                     msgspec.Meta(max_length=MAX_DIMS)]
    data: bytes


class Generator(Wire, tag="generator"):
    state: bytes  # a CPU generator's, whose size this torch build fixes


class Model(Wire, tag="model"):
    kind: ModelKind
    config: Annotated[dict[Annotated[str, msgspec.Meta(max_length=64)],
                           Annotated[int, msgspec.Meta(ge=0, le=MAX_MODEL_SIZE)]],
                      msgspec.Meta(max_length=16)]
    seed: int  # msgpack's ints are 64-bit, as torch's seeds are
    path: Annotated[str, msgspec.Meta(max_length=MAX_MODEL_PATH)] = ""


class Int(Wire, tag="int"):
    digits: Annotated[str, msgspec.Meta(max_length=MAX_DIGITS + 1, pattern="^-?[0-9]+$")]


class Text(Wire, tag="text"):
    # A str that UTF-8 cannot hold (a lone surrogate), as "surrogatepass" writes it.
    utf8: Annotated[bytes, msgspec.Meta(max_length=3 * MAX_STRING)]


class Float(Wire, tag="float"):
    text: Literal["inf", "-inf", "nan"]  # JSON, where the goldens live, has none of them


class List(Wire, tag="list"):
    items: Annotated[list[Value], msgspec.Meta(max_length=MAX_ITEMS)]
    tuple: bool = False


class Dict(Wire, tag="dict"):
    pairs: Annotated[list[tuple[Value, Value]], msgspec.Meta(max_length=MAX_ITEMS)]


Value = (None | bool | int | float | Annotated[str, msgspec.Meta(max_length=MAX_STRING)]
         | Tensor | Generator | Model | Int | Float | Text | List | Dict)


def encode(value: Any) -> Any:
    """`value` as wire data; Unencodable if the protocol cannot carry it."""
    return _encode(value, 0)


def _encode(value: Any, depth: int) -> Any:
    import torch  # only here, so that importing the protocol stays cheap

    if depth > MAX_DEPTH:
        raise Unencodable(tr("values nested more than {depth} levels deep", depth=MAX_DEPTH))
    # A subclass of int, str or float (NumPy's float64, an IntEnum) goes as the plain
    # value it is: the base class's own method copies it without calling the subclass's.
    if isinstance(value, int) and not isinstance(value, bool) and type(value) is not int:
        value = int.__int__(value)
    elif isinstance(value, str) and type(value) is not str:
        value = str.__str__(value)
    elif isinstance(value, float) and type(value) is not float:
        value = float.__float__(value)
    if value is None or isinstance(value, bool) or (
            isinstance(value, int) and -(2**63) <= value < 2**64):
        return value
    if isinstance(value, int):  # beyond msgpack's 64 bits, as its digits
        try:
            digits = str(int(value))
        except ValueError:  # more digits than Python will write
            digits = ""
        if not digits or len(digits.lstrip("-")) > MAX_DIGITS:
            raise Unencodable(tr("an int of more than {most} digits", most=MAX_DIGITS))
        return Int(digits)
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            raise Unencodable(tr("a str of {size} characters (at most {most} can be sent)",
                                 size=len(value), most=MAX_STRING))
        return value if value.isascii() or encodes(value) else Text(
            value.encode("utf-8", "surrogatepass"))
    if isinstance(value, float):
        return value if math.isfinite(value) else Float(repr(value))
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value)
    if isinstance(value, torch.Generator):
        return Generator(value.get_state().numpy().tobytes())
    if isinstance(value, ModelSpec):
        return Model(value.kind, value.config, value.seed, value.path or "")
    if isinstance(value, (list, tuple)):
        # islice: a list subclass may claim any length or iterate for ever.
        items = list(itertools.islice(value, MAX_ITEMS + 1))
        if len(items) > MAX_ITEMS:
            raise Unencodable(tr("a {type} of more than {most} items",
                                 type=type(value).__name__, most=MAX_ITEMS))
        return List([_encode(v, depth + 1) for v in items], isinstance(value, tuple))
    if isinstance(value, dict):
        pairs = list(itertools.islice(value.items(), MAX_ITEMS + 1))
        if len(pairs) > MAX_ITEMS:
            raise Unencodable(tr("a dict of more than {most} items", most=MAX_ITEMS))
        return Dict([(_encode(k, depth + 1), _encode(v, depth + 1)) for k, v in pairs])
    raise Unencodable(tr("a value of type {type}", type=type_name(type(value))))


def type_name(kind: type) -> str:
    """A type as a learner tells it apart: NumPy's float32 as numpy.float32, not float32
    (torch has one too); a builtin by its own name. Clipped: a class's own code sets
    its names."""
    module, name = str(getattr(kind, "__module__", "")), str(kind.__qualname__)
    return (name if module in ("builtins", "") else f"{module}.{name}")[:200]


def encodes(text: str) -> bool:
    """Whether UTF-8, and so msgpack, can hold `text`."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _encode_tensor(value: Any) -> Tensor:
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
        # An empty tensor can keep a stride of 0 (one made from NumPy), which .view refuses.
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
    except Exception as exc:  # noqa: BLE001 - meta tensors, odd subclasses: all refused alike
        raise Unencodable(tr("a tensor whose data cannot be read ({error})",
                             error=type(exc).__name__)) from None
    return Tensor(dtype, list(t.shape), raw)


# --- decoding: everything here may come from a hostile process ------------------------
def decode(value: Any) -> Any:
    """The value `encode` made, rebuilt from its structs or from the plain data a
    message or the goldens hold; ProtocolError if it breaks any rule."""
    try:
        return _decode(msgspec.convert(value, Value), 0)
    except ProtocolError:
        raise
    except msgspec.ValidationError as exc:
        raise ProtocolError(str(exc)[:300]) from None
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
    if isinstance(value, List):
        items = [_decode(v, depth + 1) for v in value.items]
        return tuple(items) if value.tuple else items
    if isinstance(value, Dict):
        result = {}
        for key, item in value.pairs:
            key = _decode(key, depth + 1)
            try:
                hash(key)
            except TypeError:
                raise ProtocolError(f"a dict key of type {type(key).__name__}") from None
            result[key] = _decode(item, depth + 1)
        return result
    if isinstance(value, Tensor):
        return _decode_tensor(value)
    if isinstance(value, Generator):
        return _decode_generator(value.state)
    if isinstance(value, Model):
        return ModelSpec(value.kind, value.config, value.seed, value.path)
    if isinstance(value, Int):
        return int(value.digits)
    if isinstance(value, Float):
        return float(value.text)
    if isinstance(value, Text):
        text = value.utf8.decode("utf-8", "surrogatepass")
        if len(text) > MAX_STRING:
            raise ProtocolError(f"a string of {len(text)} characters (at most {MAX_STRING})")
        return text
    return value


def _decode_tensor(spec: Tensor) -> Any:
    import torch

    dtype = getattr(torch, spec.dtype)
    count = math.prod(spec.shape)
    if count > MAX_ELEMENTS:
        raise ProtocolError(f"a tensor of {count} elements (at most {MAX_ELEMENTS})")
    if len(spec.data) != count * dtype.itemsize:
        raise ProtocolError(f"tensor data of {len(spec.data)} bytes does not match its shape "
                            f"{spec.shape} and dtype {spec.dtype}")
    if not spec.data:
        return torch.empty(spec.shape, dtype=dtype)
    if spec.dtype == "bool":
        # Any byte but 0 and 1 in a bool tensor is undefined behaviour in torch.
        raw = torch.frombuffer(bytearray(spec.data), dtype=torch.uint8)
        return raw.reshape(spec.shape) != 0
    # A copy: a tensor over a buffer cannot be resized, which a learner's code may do.
    return torch.frombuffer(bytearray(spec.data), dtype=dtype).reshape(spec.shape).clone()


@functools.cache
def generator_state_size() -> int:
    """Bytes of a CPU generator's state: fixed for this torch build."""
    import torch

    return torch.Generator().get_state().numel()


def _decode_generator(state: bytes) -> Any:
    import torch

    size = generator_state_size()
    if len(state) != size:
        raise ProtocolError(f"a generator state of {len(state)} bytes (a CPU generator's "
                            f"is {size})")
    generator = torch.Generator()
    try:
        generator.set_state(torch.frombuffer(bytearray(state), dtype=torch.uint8))
    except RuntimeError:
        raise ProtocolError("a generator state torch refuses") from None
    return generator


def same_memory(result: Any, argument: Any) -> bool:
    """Whether `result` is the tensor `argument`, or a view of its memory: what a caller
    changing the result would change in its own input."""
    import torch  # only here, so that importing the protocol stays cheap

    if not (isinstance(result, torch.Tensor) and isinstance(argument, torch.Tensor)):
        return False
    mine, theirs = result.untyped_storage(), argument.untyped_storage()
    # Two empty tensors may both point nowhere: no memory is shared then.
    return mine.nbytes() > 0 and mine.data_ptr() == theirs.data_ptr()
