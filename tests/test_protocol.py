"""What crosses to and from the worker: round trips, and refusal of anything malformed."""

from __future__ import annotations

import io
import struct

import msgspec
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.model.spec import ModelSpec
from grader.sandbox.host.process import CallOutcome
from grader.sandbox.wire.encoding import MAX_DEPTH, ProtocolError, decode, encode
from grader.sandbox.wire.frames import (
    MAX_FRAME,
    MAX_NESTING,
    TOO_DEEP,
    Oversized,
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
    # Through a message, and through JSON as the goldens hold it (the bytes in base64).
    for back in (decode(msgspec.msgpack.decode(msgspec.msgpack.encode(encode(tensor)))),
                 decode(msgspec.json.decode(msgspec.json.encode(encode(tensor))))):
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
    # A lone surrogate, which UTF-8 cannot hold, arrives as it left.
    assert decode(msgspec.msgpack.decode(msgspec.msgpack.encode(encode("a\ud800b")))) == (
        "a\ud800b")
    # Past msgpack's 64 bits, an int travels as its digits, up to Python's own limit.
    assert decode(encode([-(2**63), 2**64 - 1, 2**64, -(10**4299)])) == [
        -(2**63), 2**64 - 1, 2**64, -(10**4299)]
    assert decode(encode({1: "a"})) == {1: "a"}


def test_an_empty_tensor_made_from_numpy_crosses():
    import numpy

    for empty in (torch.tensor(numpy.array([], dtype=numpy.int64)),
                  torch.from_numpy(numpy.zeros((0, 3), dtype=numpy.float32))):
        back = decode(msgspec.msgpack.decode(msgspec.msgpack.encode(encode(empty))))
        assert back.shape == empty.shape and back.dtype == empty.dtype


def test_a_subclass_of_a_plain_value_crosses_as_the_plain_value():
    """NumPy's float64 is a float: a learning rate from np.cos is a right answer. The
    subclass's own methods are not called to copy it."""
    import enum

    import numpy

    class Loud(str):
        def __str__(self) -> str:
            raise AssertionError("called")

    class Count(enum.IntEnum):
        THREE = 3

    for value, plain in ((numpy.float64(0.25), 0.25), (Loud("ab"), "ab"), (Count.THREE, 3),
                         ([numpy.float64(-1.5)], [-1.5]), (numpy.float64("nan"), None)):
        back = decode(msgspec.msgpack.decode(msgspec.msgpack.encode(encode(value))))
        if plain is None:
            assert type(back) is float and back != back
        else:
            assert back == plain and type(back) is type(plain)
            assert all(type(v) is float for v in back) if isinstance(back, list) else True


def test_unsupported_values_are_refused():
    with pytest.raises(TypeError):
        encode(object())
    with pytest.raises(TypeError, match="an int of more than 4300 digits"):
        encode(10**4300)


@pytest.mark.parametrize("bad", [
    {"type": "tensor", "dtype": "float32", "shape": [3], "data": b"\0\0\0"},  # not 12 bytes
    {"type": "tensor", "dtype": "os.system", "shape": [], "data": b""},
    {"type": "tensor", "dtype": "float32", "shape": [1], "data": b"\0" * 4, "more": 1},
    {"type": "float", "text": "1e309"},
    {"type": "int", "digits": "12e3"},
    {"type": "int", "digits": "1" * 4302},
    {"type": "what"},
    {"type": "list", "items": [{"type": "dict", "pairs": [[[1], 2]]}]},  # a list as a key
    [1, 2],  # lists travel as {"type": "list"}
])
def test_malformed_values_are_refused(bad):
    with pytest.raises(ProtocolError):
        decode(bad)


def test_oversized_and_non_msgpack_frames_are_refused():
    with pytest.raises(ProtocolError):
        read_frame(io.BytesIO(struct.pack(">I", MAX_FRAME + 1)))
    with pytest.raises(ProtocolError):
        read_frame(io.BytesIO(struct.pack(">I", 5) + b"\xc1junk"))  # 0xc1: never used
    with pytest.raises(ProtocolError, match="must be a map"):
        read_frame(framed(msgspec.msgpack.encode([1])))
    assert read_frame(io.BytesIO(b"\x00\x00")) is None  # cut short: end of stream


def framed(data: bytes) -> io.BytesIO:
    return io.BytesIO(struct.pack(">I", len(data)) + data)


def nested(levels: int) -> bytes:
    """A message `levels` deep (the message itself is level 1): {"v": [[...[1]...]]}."""
    return b"\x81\xa1v" + b"\x91" * (levels - 1) + b"\x01"


@pytest.mark.parametrize("levels", [MAX_NESTING + 1, 600, 1200, 100_000])
def test_a_message_nested_too_deeply_is_refused_with_one_message(levels):
    # The limit is the protocol's own, not the decoder's, which goes as deep as the
    # Python version's recursion limit lets it.
    with pytest.raises(ProtocolError) as refused:
        read_frame(framed(nested(levels)))
    assert str(refused.value) == TOO_DEEP


def test_a_message_as_deep_as_the_limit_is_read():
    assert read_frame(framed(nested(MAX_NESTING)))["v"] is not None


def test_the_deepest_value_encode_sends_is_read_back():
    value: object = 1
    for _ in range(MAX_DEPTH):
        value = {"k": value}
    stream = io.BytesIO()
    write_frame(stream, {"ok": True, "result": encode(value)})
    stream.seek(0)
    assert decode(read_frame(stream)["result"]) == value


def test_printed_text_that_utf8_cannot_hold_is_sent_as_its_escape():
    stream = io.BytesIO()
    write_frame(stream, {"ok": True, "result": encode("\udc80"), "output": "x\ud800\n",
                         "frames": ["\udfff"]})
    stream.seek(0)
    message = read_frame(stream)
    assert message["output"] == "x\\ud800\n" and message["frames"] == ["\\udfff"]
    assert decode(message["result"]) == "\udc80"


def test_a_frame_over_the_readers_limit_is_dropped_and_the_stream_stays_in_step():
    stream = io.BytesIO()
    write_frame(stream, {"big": "x" * 5000})
    write_frame(stream, {"next": 1})
    stream.seek(0)
    asked = []
    with pytest.raises(Oversized, match="larger than the 1000 allowed"):
        read_frame(stream, lambda: asked.append(1) or 1000)
    assert asked == [1]  # asked once the header came
    assert read_frame(stream, 1000) == {"next": 1}


# --- a harness's result, which the submission beside it in the worker can replace --------
def trained() -> tuple:
    """train_loop_run's result as the harness makes it, through the wire."""
    modes = {"grad, train": 3, "grad, eval": 0, "no grad, train": 0, "no grad, eval": 2}
    return decode(encode(([(0, 4.1, 4.2), (3, 3.9, 4.0)], {"w": torch.zeros(2, 3)}, modes,
                          [(1e-3,), (5e-4,)])))


def test_a_harness_result_as_the_harness_makes_it_fits() -> None:
    from grader.sandbox.worker.harness_ref import harness_result_fits

    reference = trained()
    assert harness_result_fits("train_loop_run", reference, reference)
    # What the learner's loop gave is the learner's answer, read by the judges.
    learner = decode(encode(("a NoneType", {"w": torch.ones(2, 3, dtype=torch.float64),
                                            "extra": torch.ones(1)}, reference[2], [()])))
    assert harness_result_fits("train_loop_run", learner, reference)
    assert harness_result_fits("clip_gradients", decode(encode(("x", [None, torch.ones(2)]))),
                               None)
    assert harness_result_fits("word_streamer", decode(encode([(0, "a "), (2, None)])), None)


@pytest.mark.parametrize("forged", [
    5, (), ([], {"w": torch.zeros(2, 3)}, {}, []),  # no modes
    ([], {}, {"grad, train": 1}, []),  # a weight missing, and modes
    ([], {"w": torch.zeros(3)}, trained()[2], []),  # another shape
    ([], {"w": torch.zeros(2, 3, dtype=torch.bool)}, trained()[2], []),
    ([], {"w": torch.zeros(2, 3)}, trained()[2], [5]),  # a rate that is no tuple
])
def test_a_replaced_harness_result_does_not_fit(forged: object) -> None:
    from grader.sandbox.worker.harness_ref import harness_result_fits

    assert not harness_result_fits("train_loop_run", decode(encode(forged)), trained())


class Answers:
    """A submission process whose every call answers `result`."""

    load_error, witnessed, calls = None, False, 1

    def __init__(self, result: object) -> None:
        self.result = result

    def call(self, method, args, kwargs, watch, iterate, while_waiting):  # noqa: ANN001, ANN201
        if while_waiting:
            while_waiting()
        return CallOutcome(result=self.result)


@pytest.mark.parametrize("weights", [{"w": torch.zeros(2, 3)}, {"v": torch.zeros(2, 3)}])
def test_a_grade_holds_a_harness_result_to_the_references_weights(monkeypatch, weights) -> None:  # noqa: ANN001
    # Any names fit where no reference's result is at hand: the grade's one check of the
    # shape is made with it, so a weight the reference's result has must be there.
    from grader.grading.subject.kata import Kata
    from grader.grading.values.failures import GradeFailure
    from grader.registry import find
    from grader.sandbox.worker.harness_ref import harness_ref

    forged = decode(encode((trained()[0], weights, trained()[2], trained()[3])))
    kata = Kata(find("train-loop"), Answers(forged), reference=None)  # type: ignore[arg-type]
    monkeypatch.setattr(kata, "reference_call", lambda *_: trained())
    if "w" in weights:
        assert kata.compare(harness_ref("train_loop_run"))[0] == ("value", forged)
    else:
        with pytest.raises(GradeFailure, match="train_loop_run is not shaped"):
            kata.compare(harness_ref("train_loop_run"))


def test_a_message_names_what_a_harness_runs_as_the_learner_names_it() -> None:
    """`harness:greedy_with_fixed_logits() changed its input` named the grader's own
    code; the learner wrote greedy(). Every harness a grade judges says what it drives,
    and drives what it says (its source calls it, or takes the class)."""
    import inspect

    from grader.sandbox.worker import harnesses
    from grader.sandbox.worker.harness_ref import DRIVES, RESULTS, harness_ref, learners_name

    assert set(RESULTS) <= set(DRIVES)
    for harness, driven in DRIVES.items():
        source = inspect.getsource(getattr(harnesses, harness))
        assert f".{driven}(" in source or f'"{driven}"' in source, (harness, driven)
        assert learners_name(harness_ref(harness)) == driven
    assert learners_name("top_k_filter") == "top_k_filter"


def test_a_result_that_is_an_inputs_memory_is_told_from_a_new_tensor() -> None:
    from grader.sandbox.wire.encoding import same_memory

    logits = torch.randn(2, 5)
    assert same_memory(logits, logits) and same_memory(logits.view(10), logits)
    assert same_memory(logits[0], logits) and same_memory(logits[1:], logits)
    assert not same_memory(logits.clone(), logits) and not same_memory(logits / 1, logits)
    assert not same_memory(logits.masked_fill(logits < 0, 0.0), logits)
    assert not same_memory(torch.empty(0), torch.empty(0))  # no memory to share
    assert not same_memory([logits], logits) and not same_memory(logits, [logits])
