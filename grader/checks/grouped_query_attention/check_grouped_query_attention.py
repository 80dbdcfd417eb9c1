"""Checks for problem 34, grouped-query attention with rotary positions and a KV cache.

The learner's GroupedQueryAttention is built from a Llama-style config (grader/model/
llama.py) and its four projections are loaded by name (q_proj, k_proj, v_proj, o_proj, no
biases). `forward(x, past)` returns `(y, (k, v))`: the output, and the keys (turned by
RoPE) and values of every token so far, which the next call takes as `past`.

The real weights are the shipped GPT's attention layers without their biases, their
key and value heads mean-pooled in groups, the way Ainslie et al. (2023) turn a
multi-head checkpoint into a grouped-query one; the inputs are what those layers read.
Then random weights of other sizes, multi-query (one key/value head) and multi-head
(as many as the queries) among them, caches handed in, and a run of the learner's own
caches, a prefix then one token at a time, against the whole sequence in one pass.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_activations
from grader.grading.subject.cases import attention_input, corpus_prefix, random_input
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.reference import fresh_args
from grader.grading.values.equality import Outcome, outcome_of, same_activations
from grader.grading.values.failures import GradeFailure, naming
from grader.locale import tr
from grader.model import artifacts
from grader.model.llama import LlamaConfig, apply_rope
from grader.model.parts import given, state_dict
from grader.wording import Plural, a_kind

Cache = tuple[torch.Tensor, torch.Tensor]
# Random weights are drawn from N(0, SCALE^2 / fan_in): scores of a few units, so that
# the softmax is far from uniform and far from one-hot, where every mistake shows.
SCALE = 1.5
# The learners' copy judges the stored (y, (k, v)) as module outputs, each tensor within a
# bound of its own scale (grader/release/practice/judge.py), as same_attention does here.
PRACTICE_RULE = "activations"


def rope(x: torch.Tensor, start: int, base: float, pairing: str = "halves") -> torch.Tensor:
    """Problem 32's rotary embeddings (`pairing="pairs"`: neighbours, its first mistake)."""
    if pairing == "halves":
        return apply_rope(x, start, base)
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    angles = torch.outer(torch.arange(start, start + x.shape[-2], dtype=torch.float32),
                         inv_freq)
    laid = angles.repeat_interleave(2, dim=-1)
    turned = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
    return x * laid.cos() + turned * laid.sin()


def attention(config: dict[str, Any], weights: dict[str, Any], x: torch.Tensor,
              past: Cache | None = None, *, groups: str = "interleave",
              turned: str = "qk", positions: str = "start", cached: str = "turned",
              mask: str = "causal", scale: str = "head", returned: str = "all",
              output: bool = True, pairing: str = "halves", own_base: bool = True,
              softmax_dim: int = -1, merge: str = "heads") -> tuple[torch.Tensor, Cache]:
    """Grouped-query attention, or one of its known mistakes.

    `groups="tile"` gives query head h the key head h % n_kv_head (`repeat` instead of
    `repeat_interleave`); `turned` says which of q, k, v RoPE turns; `positions="zero"`
    restarts the new tokens' positions at 0; `cached="raw"` caches the keys before they
    are turned (and returns them so), `cached="turned-again"` turns the whole cache at
    positions 0 .. on every call, and `cached="turned-after-cat"` does so and returns
    the cache so turned, whose earlier keys each call then turns once more; `mask` is
    "causal", None, or "first" (placed at the start of the cache, as if there were
    none); `scale` divides by sqrt(head_dim),
    sqrt(n_embd), head_dim or nothing; `returned` is "all", "new" (only this call's
    keys and values) or "repeated" (after repeating them for every query head);
    `output=False` leaves out o_proj; `pairing` and `own_base` are RoPE's own mistakes;
    `merge="time"` joins the heads' outputs, (B, n_head, T, head_dim), to (B, T, n_embd)
    without transposing them back, which mixes the positions (as multi-head attention's
    same knob does).
    """
    c, w = LlamaConfig(**config), state_dict(weights)
    B, T, _ = x.shape
    H, KV, hd = c.n_head, c.n_kv_head, c.n_embd // c.n_head
    base = c.rope_base if own_base else 10000.0
    q = (x @ w["q_proj.weight"].T).view(B, T, H, hd).transpose(1, 2)
    k = (x @ w["k_proj.weight"].T).view(B, T, KV, hd).transpose(1, 2)
    v = (x @ w["v_proj.weight"].T).view(B, T, KV, hd).transpose(1, 2)
    start = 0 if past is None else past[0].shape[2]
    at = start if positions == "start" else 0
    turn = partial(rope, base=base, pairing=pairing)
    raw_k = k
    q = turn(q, at) if "q" in turned else q
    k = turn(k, at) if "k" in turned else k
    v = turn(v, at) if "v" in turned else v
    if past is not None:
        k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        raw_k = torch.cat([past[0], raw_k], dim=2)
    if cached in ("turned-again", "turned-after-cat"):
        k = turn(raw_k, 0)
    group = H // KV
    if groups == "interleave":
        keys, values = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    else:
        keys, values = k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1)
    divisor = {"head": math.sqrt(hd), "embd": math.sqrt(c.n_embd), "size": hd,
               "none": 1.0}[scale]
    scores = q @ keys.transpose(-2, -1) / divisor
    S = keys.shape[2]
    if mask is not None:
        allowed = torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T if mask == "causal"
                                                          else 0)
        scores = scores.masked_fill(~allowed, float("-inf"))
    heads = F.softmax(scores, dim=softmax_dim) @ values
    y = (heads.transpose(1, 2) if merge == "heads" else heads).reshape(B, T, H * hd)
    y = y @ w["o_proj.weight"].T if output else y
    if cached in ("raw", "turned-again"):
        k = raw_k
    if returned == "new":
        k, v = k[:, :, start:], v[:, :, start:]
    elif returned == "repeated":
        k, v = keys, values
    return y, (k, v)


MISTAKES = mistakes_of(globals(), attention)


def parts(outcome: Outcome) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
    """(y, k, v) of a value shaped (y, (k, v)), or None."""
    value = outcome[1]
    if outcome[0] != "value" or not isinstance(value, (tuple, list)) or len(value) != 2:
        return None
    y, cache = value
    if not isinstance(cache, (tuple, list)) or len(cache) != 2:
        return None
    found = (y, *cache)
    return found if all(isinstance(t, torch.Tensor) for t in found) else None  # type: ignore[return-value]


def same_attention(a: Outcome, b: Outcome) -> bool:
    """Whether two outcomes are the same (y, (k, v)), each within the activations'
    tolerance (a mistake's match, and the live reference against its golden)."""
    mine, theirs = parts(a), parts(b)
    if mine is None or theirs is None:
        return a[0] == b[0] == "error" and a[1] == b[1]
    return all(same_activations(("value", x), ("value", y)) for x, y in zip(mine, theirs))


def parts_named() -> tuple[str, str, str]:
    """What y, k and v are called in a message."""
    return (tr("the attention's output y"), Plural(tr("the returned keys, k")),
            Plural(tr("the returned values, v")))


def shape() -> str:
    """What forward() must return."""
    return tr("return (y, (k, v)): y of shape (B, T, n_embd), and the cache's keys and "
              "values, each (B, n_kv_head, T_past + T, head_dim)")


def judge(got: Any, expected: tuple, call: Call) -> None:
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not isinstance(
            got[1], (tuple, list)) or len(got[1]) != 2:
        raise GradeFailure(tr("forward() returned {what}; {shape}",
                              what=a_kind(type(got).__name__), shape=shape()), hint=shape())
    y, (k, v) = got
    want_y, (want_k, want_v) = expected
    for mine, want, what in zip((y, k, v), (want_y, want_k, want_v), parts_named()):
        expect_activations(mine, want, what)


def llama_config(**changed: Any) -> dict[str, Any]:
    """The shipped size of Llama-style config (4 query heads, 2 key/value heads of 16)."""
    return LlamaConfig(vocab_size=artifacts.load_config().vocab_size, **changed).to_dict()


def small_config(n_head: int, n_kv_head: int, head_dim: int, base: float = 10000.0
                 ) -> dict[str, Any]:
    return LlamaConfig(vocab_size=6, context_length=8, n_layer=1, n_head=n_head,
                       n_kv_head=n_kv_head, n_embd=n_head * head_dim,
                       rope_base=base).to_dict()


def shipped_weights(layer: int) -> dict[str, Any]:
    """Block `layer`'s attention of the shipped GPT as a grouped-query one: its query and
    output weights as they are, its key and value heads averaged in pairs (heads 0 and 1
    make key head 0), without the biases."""
    state = artifacts.shipped_model().state_dict()
    config = artifacts.load_config()
    C, H = config.n_embd, config.n_head
    KV, hd = LlamaConfig(vocab_size=1).n_kv_head, C // H
    q, k, v = state[f"blocks.{layer}.attn.qkv.weight"].detach().split(C)

    def pooled(w: torch.Tensor) -> torch.Tensor:
        return w.reshape(KV, H // KV, hd, C).mean(dim=1).reshape(KV * hd, C).clone()

    return given({"q_proj.weight": q.clone(), "k_proj.weight": pooled(k),
                  "v_proj.weight": pooled(v),
                  "o_proj.weight": state[f"blocks.{layer}.attn.proj.weight"].detach().clone()})


def random_weights(config: dict[str, Any], seed: int, scale: float = SCALE) -> dict[str, Any]:
    c = LlamaConfig(**config)
    hd = c.n_embd // c.n_head
    generator = torch.Generator().manual_seed(seed)

    def draw(rows: int, cols: int) -> torch.Tensor:
        return torch.randn(rows, cols, generator=generator) * scale / cols ** 0.5

    return given({"q_proj.weight": draw(c.n_head * hd, c.n_embd),
                  "k_proj.weight": draw(c.n_kv_head * hd, c.n_embd),
                  "v_proj.weight": draw(c.n_kv_head * hd, c.n_embd),
                  "o_proj.weight": draw(c.n_embd, c.n_head * hd)})


@torch.no_grad()
def after_a_cache(config: dict[str, Any], weights: dict[str, Any], x: torch.Tensor,
                  cached: int) -> tuple:
    """The arguments of a call on x's tokens from `cached` on, with the cache of the
    ones before them as the right answer leaves it."""
    _, past = attention(config, weights, x[:, :cached])
    return config, weights, x[:, cached:].clone(), (past[0].clone(), past[1].clone())


def empty_cache(config: dict[str, Any], batch: int) -> Cache:
    c = LlamaConfig(**config)
    shape = (batch, c.n_kv_head, 0, c.n_embd // c.n_head)
    return torch.zeros(shape), torch.zeros(shape)


STORY = "Once upon a time, there was a"


def cases() -> dict[str, tuple]:
    config = llama_config()
    mqa = small_config(4, 1, 4)
    llama3 = small_config(4, 2, 8, base=500000.0)
    return {
        "a-sentence": (config, shipped_weights(0), attention_input(STORY), None),
        "a-later-block": (config, shipped_weights(2), attention_input("Tom and his dog ran", 2),
                          None),
        "one-token": (config, shipped_weights(1), attention_input("\n", 1), None),
        "full-window": (config, shipped_weights(1), attention_input(corpus_prefix(48), 1),
                        None),
        "batch-of-two": (config, shipped_weights(0),
                         torch.cat([attention_input("The cat"), attention_input("Tom ran")]),
                         None),
        "the-next-token-after-a-cache": after_a_cache(config, shipped_weights(0),
                                                      attention_input(STORY), len(STORY) - 1),
        "five-tokens-after-ten": after_a_cache(config, shipped_weights(1),
                                               attention_input("Tom and his dog", 1), 10),
        "an-empty-cache": (config, shipped_weights(0), attention_input("The cat"),
                           empty_cache(config, 1)),
        "one-key-head-for-all": after_a_cache(mqa, random_weights(mqa, 1),
                                              random_input((2, 9, 16), seed=2), 6),
        "as-many-key-heads-as-queries": (small_config(2, 2, 4), random_weights(
            small_config(2, 2, 4), 3), random_input((1, 6, 8), seed=4), None),
        "llama-3-base": after_a_cache(llama3, random_weights(llama3, 5),
                                      random_input((1, 24, 32), seed=6), 20),
        "a-long-cache": after_a_cache(small_config(4, 2, 4), random_weights(
            small_config(4, 2, 4), 7), random_input((1, 102, 16), seed=8), 100),
    }


def draw_example(data: st.DataObject) -> tuple:
    n_kv_head = data.draw(st.sampled_from([1, 2, 4]), label="n_kv_head")
    group = data.draw(st.sampled_from([1, 2, 4]), label="n_head // n_kv_head")
    head_dim = data.draw(st.sampled_from([2, 4, 8]), label="head_dim")
    base = data.draw(st.sampled_from([10000.0, 500000.0, 100.0]), label="rope_base")
    config = small_config(n_kv_head * group, n_kv_head, head_dim, base)
    batch = data.draw(st.integers(1, 2), label="B")
    cached = data.draw(st.one_of(st.none(), st.integers(0, 12)), label="T_past")
    length = data.draw(st.integers(1, 6), label="T")
    scale = data.draw(st.sampled_from([0.5, SCALE, 3.0]), label="scale of the weights")
    seed = data.draw(st.integers(0, 2**16), label="seed")
    weights = random_weights(config, seed, scale)
    x = random_input((batch, (cached or 0) + length, config["n_embd"]), seed + 1)
    if cached is None:  # past=None: the call of a first pass, without a cache
        return config, weights, x, None
    return after_a_cache(config, weights, x, cached)


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_attention,
                    same_as_golden=same_attention)

test_shipped_attention, test_random_attention = CONTRACT.tests(
    "Grouped-query attention: the shipped attention pooled to two key/value heads, after "
    "caches, one key head or as many as queries, Llama 3's base",
    "Grouped-query attention of random sizes, bases and caches, against the reference",
    draw_example)


# -- the learner's own caches, one token at a time ------------------------------------------
def chained(forward: Any, config: dict[str, Any], weights: dict[str, Any], x: torch.Tensor,
            prefix: int) -> Outcome:
    """The first `prefix` tokens in one call, then each later one alone with the cache the
    call before returned: ("value", (the outputs joined along T, the last cache))."""
    outcome = forward(config, weights, x[:, :prefix])
    outputs = []
    for t in range(prefix, x.shape[1] + 1):
        found = parts(outcome)
        if found is None:
            return outcome
        outputs.append(found[0])
        if t == x.shape[1]:
            break
        outcome = forward(config, weights, x[:, t:t + 1].clone(), (found[1], found[2]))
    return ("value", (torch.cat(outputs, dim=1), (found[1], found[2])))


def reference_step(forward: Any) -> Any:
    """A call of `forward` as an outcome: a mistake's own cache may not fit its next call."""
    def step(*args: Any) -> Outcome:
        with torch.no_grad():
            return outcome_of(forward, *fresh_args(args))
    return step


CHAIN_PROMPT = "Tom and his dog ran to the park"
CHAIN_PREFIX = 4


def test_one_token_at_a_time(kata: Kata) -> None:
    """A prefix, then one token at a time with the caches returned, gives the one-pass values"""
    config, weights = llama_config(), shipped_weights(1)
    x = attention_input(CHAIN_PROMPT, 1)
    with torch.no_grad():
        whole = kata.reference.forward(config, weights, x)

    def learner(*args: Any) -> Outcome:
        return kata.outcome(CONTRACT.method, *args, arg_names=CONTRACT.arg_names[:len(args)])

    got = chained(learner, config, weights, x, CHAIN_PREFIX)
    if got[0] != "value" or parts(got) is None:
        return  # an error, or no (y, (k, v)), is the other checks' to report
    y, k, v = parts(got)  # type: ignore[misc]
    where = tr("the first {prefix} tokens of {prompt} in one call, then each later token "
               "alone with the cache the call before returned", prefix=CHAIN_PREFIX,
               prompt=repr(CHAIN_PROMPT))
    try:
        for mine, want, what in zip((y, k, v), (whole[0], *whole[1]), parts_named()):
            expect_activations(mine, want, what)
    except GradeFailure as failure:
        def diagnose() -> Any:
            for mistake in MISTAKES:
                for run in mistake.runs:
                    if same_attention(got, chained(reference_step(run), config, weights, x,
                                                   CHAIN_PREFIX)):
                        return naming(mistake)
            return ""

        raise GradeFailure(tr("{where}: {failure}; the whole sequence in one call gives the "
                              "expected values", where=where, failure=failure.message),
                           diagnose, hint=failure.hint) from None

