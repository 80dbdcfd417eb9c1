"""What crosses to and from the worker: round trips, and refusal of anything malformed."""

from __future__ import annotations

import io
import json
import struct

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.sandbox.protocol import (
    MAX_FRAME,
    ModelSpec,
    ProtocolError,
    decode,
    encode,
    read_frame,
    write_frame,
)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
          torch.int32, torch.uint8, torch.bool]

plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.integers() | st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(derandomize=True, database=None, deadline=None)
@given(value=plain)
def test_plain_values_round_trip(value):
    framed = io.BytesIO()
    write_frame(framed, {"v": encode(value)})
    framed.seek(0)
    assert decode(read_frame(framed)["v"]) == value


@settings(derandomize=True, database=None, deadline=None)
@given(dtype=st.sampled_from(DTYPES),
       shape=st.lists(st.integers(0, 4), max_size=3), seed=st.integers(0, 1000))
def test_tensors_round_trip_bit_for_bit(dtype, shape, seed):
    g = torch.Generator().manual_seed(seed)
    tensor = (torch.randn(shape, generator=g) * 100).to(dtype)
    back = decode(json.loads(json.dumps(encode(tensor))))
    assert back.dtype == dtype and back.shape == tensor.shape
    assert torch.equal(back, tensor)


def test_special_floats_generators_and_models_round_trip():
    assert decode(encode(float("inf"))) == float("inf")
    assert decode(encode(float("-inf"))) == float("-inf")
    value = decode(encode(float("nan")))
    assert value != value
    g = torch.Generator().manual_seed(7)
    g.manual_seed(7)
    assert torch.equal(decode(encode(g)).get_state(), g.get_state())
    spec = ModelSpec("random", {"vocab_size": 5}, 3)
    assert decode(encode(spec)) == spec
    assert decode(encode((1, 2))) == (1, 2)
    assert decode(encode({1: "a"})) == {1: "a"}


def test_unsupported_values_are_refused():
    with pytest.raises(TypeError):
        encode(object())


@pytest.mark.parametrize("bad", [
    {"__tensor__": {"dtype": "float32", "shape": [3], "data": "AAAA"}},  # 3 bytes, not 12
    {"__tensor__": {"dtype": "os.system", "shape": [], "data": ""}},
    {"__float__": "1e309"},
    {"__what__": 1},
    [1, 2],
])
def test_malformed_values_are_refused(bad):
    with pytest.raises(ProtocolError):
        decode(bad)


def test_oversized_and_non_json_frames_are_refused():
    with pytest.raises(ProtocolError):
        read_frame(io.BytesIO(struct.pack(">I", MAX_FRAME + 1)))
    with pytest.raises(ProtocolError):
        read_frame(io.BytesIO(struct.pack(">I", 5) + b"junk!"))
    assert read_frame(io.BytesIO(b"\x00\x00")) is None  # cut short: end of stream
