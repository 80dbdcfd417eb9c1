"""Checks for problem 32, rope: rotary position embeddings on queries and keys.

The statement fixes the pairing (dimension i with i + head_dim / 2, as Llama in
Hugging Face transformers and GPT-NeoX), the frequencies base ** (-2 i / head_dim)
and the position of the first token (`start`, for a KV cache). The inputs are
the shipped model's real queries and keys, split into heads, then random heads
of every even width at positions up to a few hundred, where a wrong angle shows.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_tensor
from grader.grading.subject.cases import attention_input, random_input
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import ANGLE_ULPS, ATOL, ROTATION_MISTAKE_RTOL, RTOL
from grader.locale import tr
from grader.model import artifacts
from grader.wording import Plural

BASE = 10000.0
# The live reference against a golden recorded on another machine: the cases' angles
# go up to position 263, whose rounding moves the output by about 1e-4 of its size.
GOLDEN_RTOL = 2e-4
# The learners' copy judges its stored answers by the same position-aware tolerance
# (grader/release/practice/judge.py's same_rotation, a rule of closeness only).
PRACTICE_RULE = "rotation"


def rope(x: torch.Tensor, start: int, base: float, *, pairing: str = "halves",
         layout: str = "halves", two: bool = True, first: int = 0, offset: bool = True,
         sign: float = 1.0, swap_sign: float = -1.0, dtype: torch.dtype = torch.float32,
         width: str = "head", own_base: bool = True, twice: bool = False,
         rising: bool = False, swapped: bool = False) -> torch.Tensor:
    """Rotary embeddings, or one of their known mistakes.

    `pairing` is which dimensions turn together ("halves": i and i + d/2;
    "pairs": 2i and 2i + 1), `layout` how the frequencies are laid along the
    head ("halves": repeated, "pairs": each twice in a row); `two=False` drops
    the 2 of the exponent, `twice` counts it twice (2 * arange(0, d, 2)); `first` is
    added to every position (1: counted from 1); `offset=False` ignores `start`;
    `sign=-1` turns the other way (as does rotate_half written torch.cat([x2, -x1]));
    `swap_sign=1` swaps a pair's halves without the minus; `dtype` is the angles'
    precision; `width="model"` spreads the exponents over all heads' width;
    `own_base=False` keeps 10000 whatever `base` says; `rising` drops the minus of the
    exponent (base ** (2i / d), 1 / inv_freq), so the frequencies climb from 1 to
    nearly base instead of falling to nearly 1 / base; `swapped` multiplies x by the sines
    and the turned halves by the cosines.
    """
    d = x.shape[-1]
    n = x.shape[1] * d if width == "model" else d
    b = base if own_base else BASE
    exponents = torch.arange(0, d, 2, dtype=torch.float32)[: d // 2] / n
    if not two:
        exponents = torch.arange(0, d // 2, dtype=torch.float32) / n
    elif twice:
        exponents = 2 * exponents
    inv_freq = ((b ** exponents) if rising else (1.0 / b ** exponents)).to(dtype)
    begin = (start if offset else 0) + first
    positions = torch.arange(begin, begin + x.shape[-2], dtype=torch.float32).to(dtype)
    angles = torch.outer(positions, inv_freq).float()
    laid = (torch.cat([angles, angles], dim=-1) if layout == "halves"
            else angles.repeat_interleave(2, dim=-1))
    cos, sin = laid.cos(), sign * laid.sin()
    if swapped:
        cos, sin = sin, cos
    if pairing == "halves":
        a, b_ = x[..., : d // 2], x[..., d // 2:]
        turned = torch.cat([swap_sign * b_, a], dim=-1)
    else:
        a, b_ = x[..., 0::2], x[..., 1::2]
        turned = torch.stack([swap_sign * b_, a], dim=-1).flatten(-2)
    return (x * cos + turned * sin).to(x.dtype)


# The angles in half precision: a dtype is no TOML value, so these runs are named here.
in_float16 = partial(rope, dtype=torch.float16)
in_bfloat16 = partial(rope, dtype=torch.bfloat16)


def handed_back_in_float64(x: torch.Tensor, start: int, base: float) -> torch.Tensor:
    """The rotation of x.double(), left in float64 whatever x's dtype."""
    return rope(x.double(), start, base)

MISTAKES = mistakes_of(globals(), rope)


@torch.no_grad()
def shipped_heads(prompt: str, layer: int = 0, which: str = "q") -> torch.Tensor:
    """The shipped model's queries or keys ("q", "k") for `prompt` in block `layer`,
    split into heads: (1, n_head, T, head_dim), as RoPE would receive them."""
    attn = artifacts.shipped_model().blocks[layer].attn
    x = attention_input(prompt, layer)
    n_head = artifacts.load_config().n_head
    B, T, C = x.shape
    q, k, _ = attn.qkv(x).view(B, T, 3, n_head, C // n_head).permute(2, 0, 3, 1, 4)
    return (q if which == "q" else k).contiguous()


def unit_vectors(d: int, length: int) -> torch.Tensor:
    """(1, 1, length, d): at each position ones in the first half, zeros in the
    second, whose rotated form shows each pair's cos and sin as they are."""
    x = torch.zeros(1, 1, length, d)
    x[..., : d // 2] = 1.0
    return x


def cases() -> dict[str, tuple]:
    cat = "The cat"
    story = "Once upon a time, there was a"
    return {
        "queries-of-the-cat": (shipped_heads(cat), 0, BASE),
        "keys-of-the-cat": (shipped_heads(cat, 0, "k"), 0, BASE),
        "keys-of-a-later-block": (shipped_heads("Tom and his dog ran", 2, "k"), 0, BASE),
        # One new token after a cache of the rest: it sits where it sat in the whole.
        "the-next-token-after-a-cache": (shipped_heads(story)[:, :, -1:], len(story) - 1, BASE),
        "five-tokens-after-ten": (shipped_heads("Tom ran", 1)[:, :, :5], 10, BASE),
        "one-token-at-position-0": (shipped_heads("T", 0, "k"), 0, BASE),
        "cos-and-sin-of-a-small-head": (unit_vectors(4, 4), 0, BASE),
        "a-head-of-two": (random_input((1, 2, 5, 2), seed=1), 3, BASE),
        "llama-3-base": (random_input((1, 2, 6, 16), seed=2), 100, 500000.0),
        "a-long-run": (random_input((1, 1, 64, 8), seed=3), 200, BASE),
        "two-in-a-batch": (random_input((2, 3, 5, 8), seed=4), 3, BASE),
    }


def draw_example(data: st.DataObject) -> tuple:
    batch = data.draw(st.integers(1, 2), label="B")
    heads = data.draw(st.integers(1, 4), label="H")
    length = data.draw(st.integers(1, 16), label="T")
    head_dim = data.draw(st.sampled_from([2, 4, 8, 16, 32, 64]), label="head_dim")
    start = data.draw(st.one_of(st.just(0), st.integers(0, 300)), label="start")
    base = data.draw(st.sampled_from([BASE, 500000.0, 100.0]), label="base")
    scale = data.draw(st.sampled_from([1e-2, 1.0, 30.0]), label="scale of x")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    return random_input((batch, heads, length, head_dim), seed) * scale, start, base


def size(t: torch.Tensor) -> float:
    finite = t.double()[t.isfinite()]
    return float(finite.abs().max()) if finite.numel() else 0.0


def rope_atol(expected: torch.Tensor, last_position: int) -> float:
    """Float tolerance plus the rounding of the largest angle, at the vectors' size."""
    s = size(expected)
    return ATOL + s * (RTOL + ANGLE_ULPS * (abs(last_position) + 1))


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    x, start, _ = call.args
    if isinstance(got, torch.Tensor) and isinstance(x, torch.Tensor) and got.dtype != x.dtype:
        raise GradeFailure(tr("the rotated vectors are {dtype}, but x was {x_dtype}: keep "
                              "x's dtype", dtype=got.dtype, x_dtype=x.dtype))
    expect_tensor(got, expected, Plural(tr("the rotated vectors")),
                  atol=rope_atol(expected, int(start) + int(x.shape[-2]) - 1))


def same_rotation(a: tuple[str, Any], b: tuple[str, Any],
                  rtol: float = ROTATION_MISTAKE_RTOL) -> bool:
    """Whether two outcomes are the same rotation, rounded apart (a mistake's match;
    with GOLDEN_RTOL, the live reference against its golden), in the same dtype: a
    float64 answer is none of the mistakes whose float32 it is within rounding of."""
    x, y = a[1], b[1]
    if a[0] != "value" or b[0] != "value" or not (
            isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)) or x.shape != y.shape:
        return a[0] == b[0] == "error" and x == y
    if x.dtype != y.dtype:
        return False
    return bool(torch.allclose(x.double(), y.double(), rtol=0.0,
                               atol=ATOL + rtol * size(y), equal_nan=True))


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_rotation,
                    returns_new=True,
                    same_as_golden=partial(same_rotation, rtol=GOLDEN_RTOL))

test_shipped_heads, test_random_heads = CONTRACT.tests(
    "RoPE on the shipped model's queries and keys, after a cache, with Llama 3's base and "
    "on small heads",
    "RoPE on random heads of every even width, at random positions and bases, against the "
    "reference",
    draw_example)
