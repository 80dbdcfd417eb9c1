"""Checks for problem 35, modern-gpt: a Llama-style decoder from the learner's own parts.

The learner's Llama is built from the shipped modern model's config and loaded, by
parameter name, with the shipped modern checkpoint itself (data/llama.safetensors, the
names of grader/model/llama.py's state dict), so on those weights it must give the
shipped modern model's logits; then small random Llamas of other sizes, multi-query and
multi-head among them. Its RMSNorm (29), SwiGLU (33) and attention (34) are graded
there; what is named here is how they are put together.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.module_checks import drawn_contexts, module_tests
from grader.grading.subject.cases import model_contexts
from grader.grading.subject.mistakes_data import mistakes_of
from grader.locale import marked
from grader.model import artifacts
from grader.model.llama import LlamaConfig, apply_rope
from grader.model.parts import given, state_dict


def rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def attention(c: LlamaConfig, w: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Problem 34's grouped-query attention without a cache."""
    B, T, _ = x.shape
    hd = c.n_embd // c.n_head
    q = (x @ w["q_proj.weight"].T).view(B, T, c.n_head, hd).transpose(1, 2)
    k = (x @ w["k_proj.weight"].T).view(B, T, c.n_kv_head, hd).transpose(1, 2)
    v = (x @ w["v_proj.weight"].T).view(B, T, c.n_kv_head, hd).transpose(1, 2)
    q, k = apply_rope(q, 0, c.rope_base), apply_rope(k, 0, c.rope_base)  # problem 32's
    group = c.n_head // c.n_kv_head
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
    scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, c.n_head * hd)
    return y @ w["o_proj.weight"].T


def swiglu(w: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    return (F.silu(x @ w["gate_proj.weight"].T) * (x @ w["up_proj.weight"].T)) \
        @ w["down_proj.weight"].T


def part(w: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {k.removeprefix(prefix): v for k, v in w.items() if k.startswith(prefix)}


def llama(config: dict[str, Any], weights: dict[str, Any], context: torch.Tensor, *,
          norm: str = "pre", norms: str = "own", residual: tuple[str, ...] = ("attn", "mlp"),
          final_norm: bool = True, head: str = "lm_head", softmax: bool = False,
          scale_embeddings: bool = False) -> torch.Tensor:
    """The modern GPT, or one of its known mistakes: `norm` "post" (normalise after each
    residual sum), "stream" (add the sub-layer to the normalised stream) or "parallel"
    (attention and MLP read the same input, as GPT-J's); `norms` "swapped" (each sub-layer
    reads the other's norm) or "first" (attn_norm for both); a `residual` left out; no
    `final_norm`; the `head` "embedding" (tied); a `softmax` at the end; the embeddings
    multiplied by sqrt(n_embd), as Gemma's are."""
    c, w = LlamaConfig(**config), state_dict(weights)
    x = w["embed_tokens.weight"][context]
    if scale_embeddings:
        x = x * math.sqrt(c.n_embd)
    for i in range(c.n_layer):
        p = f"layers.{i}."
        attn_w, mlp_w = part(w, p + "attn."), part(w, p + "mlp.")
        g1, g2 = w[p + "attn_norm.weight"], w[p + "mlp_norm.weight"]
        if norms == "swapped":
            g1, g2 = g2, g1
        elif norms == "first":
            g2 = g1
        n1, n2 = (partial(rms, weight=g, eps=c.norm_eps) for g in (g1, g2))
        if norm == "pre":
            a = attention(c, attn_w, n1(x))
            x = x + a if "attn" in residual else a
            m = swiglu(mlp_w, n2(x))
            x = x + m if "mlp" in residual else m
        elif norm == "post":
            x = n1(x + attention(c, attn_w, x))
            x = n2(x + swiglu(mlp_w, x))
        elif norm == "stream":
            h = n1(x)
            x = h + attention(c, attn_w, h)
            h = n2(x)
            x = h + swiglu(mlp_w, h)
        else:  # parallel
            x = x + attention(c, attn_w, n1(x)) + swiglu(mlp_w, n2(x))
    if final_norm:
        x = rms(x, w["norm.weight"], c.norm_eps)
    logits = x @ w["embed_tokens.weight" if head == "embedding" else "lm_head.weight"].T
    return F.softmax(logits, dim=-1) if softmax else logits


MISTAKES = mistakes_of(globals(), llama)


def shipped() -> tuple[dict[str, Any], dict[str, Any]]:
    """The shipped modern model's config and its weights, as the learner's Llama names them."""
    model = artifacts.shipped_llama()
    return model.config.to_dict(), given(
        {k: v.detach().clone() for k, v in model.state_dict().items()})


def random_weights(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """A Llama of `config` drawn from `seed`: projections at a linear layer's own scale,
    N(0, 1 / fan_in), embeddings N(0, 1), gains near 1 but not 1, so that every part shows."""
    c = LlamaConfig(**config)
    generator = torch.Generator().manual_seed(seed)

    def draw(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return torch.randn(*shape, generator=generator) * scale

    def linear(rows: int, cols: int) -> torch.Tensor:
        return draw(rows, cols, scale=1.5 / math.sqrt(cols))

    kv = c.n_kv_head * c.head_dim
    tensors = {"embed_tokens.weight": draw(c.vocab_size, c.n_embd)}
    for i in range(c.n_layer):
        p = f"layers.{i}."
        tensors |= {
            p + "attn_norm.weight": 1 + draw(c.n_embd, scale=0.3),
            p + "attn.q_proj.weight": linear(c.n_embd, c.n_embd),
            p + "attn.k_proj.weight": linear(kv, c.n_embd),
            p + "attn.v_proj.weight": linear(kv, c.n_embd),
            p + "attn.o_proj.weight": linear(c.n_embd, c.n_embd),
            p + "mlp_norm.weight": 1 + draw(c.n_embd, scale=0.3),
            p + "mlp.gate_proj.weight": linear(c.n_hidden, c.n_embd),
            p + "mlp.up_proj.weight": linear(c.n_hidden, c.n_embd),
            p + "mlp.down_proj.weight": linear(c.n_embd, c.n_hidden),
        }
    tensors |= {"norm.weight": 1 + draw(c.n_embd, scale=0.3),
                "lm_head.weight": linear(c.vocab_size, c.n_embd)}
    return given(tensors)


def small_config(vocab_size: int = 7, context: int = 8, n_layer: int = 2, n_head: int = 4,
                 n_kv_head: int = 2, head_dim: int = 2, n_hidden: int = 12,
                 rope_base: float = 10000.0) -> dict[str, Any]:
    return LlamaConfig(vocab_size=vocab_size, context_length=context, n_layer=n_layer,
                       n_head=n_head, n_kv_head=n_kv_head, n_embd=n_head * head_dim,
                       n_hidden=n_hidden, rope_base=rope_base).to_dict()


def cases() -> dict[str, tuple]:
    config, weights = shipped()
    small = small_config()
    other = small_config(vocab_size=5, context=6, n_layer=1, n_head=2, n_kv_head=1,
                         head_dim=4, n_hidden=5, rope_base=100.0)
    return {
        **{case: (config, weights, ids) for case, ids in model_contexts().items()},
        "random-weights": (small, random_weights(small, 7),
                           torch.tensor([[0, 1, 2, 3, 4, 5, 6, 0], [6, 6, 5, 5, 4, 4, 3, 3]])),
        "multi-query-one-layer": (other, random_weights(other, 8),
                                  torch.tensor([[4, 0, 3, 1, 2, 2]])),
    }


def draw_example(data: st.DataObject) -> tuple:
    """A small random Llama, with random weights, on random token ids."""
    n_head = data.draw(st.sampled_from([1, 2, 4]), label="n_head")
    n_kv_head = data.draw(st.sampled_from([k for k in (1, 2, 4) if n_head % k == 0]),
                          label="n_kv_head")
    config = small_config(
        vocab_size=data.draw(st.integers(2, 12), label="vocab_size"),
        context=data.draw(st.integers(1, 10), label="context_length"),
        n_layer=data.draw(st.integers(1, 2), label="n_layer"),
        n_head=n_head, n_kv_head=n_kv_head,
        head_dim=data.draw(st.sampled_from([2, 4]), label="head_dim"),
        n_hidden=data.draw(st.integers(1, 16), label="n_hidden"),
        rope_base=data.draw(st.sampled_from([10.0, 10000.0]), label="rope_base"))
    seed = data.draw(st.integers(0, 2**16), label="seed")
    return config, random_weights(config, seed), drawn_contexts(data, config)


CONTRACT, test_shipped_modern_model, test_random_llamas, test_the_same_output_twice = module_tests(
    cases, MISTAKES, draw_example, output=marked("the logits tensor"),
    shipped="Your Llama with the shipped modern weights, against the shipped modern model's logits",
    drawn="Small random Llamas, multi-query and multi-head among them, against the reference")
