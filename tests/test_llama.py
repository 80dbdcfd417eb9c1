"""The modern decoder (grader/model/llama.py) is Hugging Face's Llama, and its cache is exact.

Compared with transformers' LlamaForCausalLM built from a random configuration (nothing
downloaded), its weights copied across by name; skipped when transformers is missing.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from grader.model.llama import Llama, LlamaConfig, apply_rope

SMALL = LlamaConfig(vocab_size=29, context_length=24, n_layer=2, n_head=4, n_kv_head=2,
                    n_embd=32, n_hidden=80)

# Our names for each of Hugging Face's, which sit under "model." but for the head.
HF_NAMES = {"input_layernorm": "attn_norm", "self_attn": "attn",
            "post_attention_layernorm": "mlp_norm"}


def ours_from_hf(name: str) -> str:
    parts = name.removeprefix("model.").split(".")
    return ".".join(HF_NAMES.get(p, p) for p in parts)


def seeded(config: LlamaConfig, seed: int) -> Llama:
    torch.manual_seed(seed)
    model = Llama(config).eval()
    with torch.no_grad():
        for p in model.parameters():  # norms away from 1, so that a missing gain shows
            p.normal_(0.0, 0.3)
    return model


@pytest.mark.parametrize("n_kv_head", [1, 2, 4])
def test_the_model_is_transformers_llama(n_kv_head: int) -> None:
    transformers = pytest.importorskip("transformers")
    config = LlamaConfig(**{**SMALL.to_dict(), "n_kv_head": n_kv_head, "rope_base": 500.0})
    hf_config = transformers.LlamaConfig(
        vocab_size=config.vocab_size, hidden_size=config.n_embd,
        intermediate_size=config.n_hidden, num_hidden_layers=config.n_layer,
        num_attention_heads=config.n_head, num_key_value_heads=config.n_kv_head,
        max_position_embeddings=config.context_length, rms_norm_eps=config.norm_eps,
        rope_theta=config.rope_base, tie_word_embeddings=False, attention_bias=False,
        mlp_bias=False, attn_implementation="eager")
    if isinstance(getattr(hf_config, "rope_parameters", None), dict):
        hf_config.rope_parameters["rope_theta"] = config.rope_base  # transformers 5 keeps it here
    hf = transformers.LlamaForCausalLM(hf_config).eval()
    ours = seeded(config, 0)
    state = ours.state_dict()
    hf_state = hf.state_dict()
    assert {ours_from_hf(n) for n in hf_state} == set(state)
    hf.load_state_dict({n: state[ours_from_hf(n)] for n in hf_state})
    context = torch.randint(config.vocab_size, (3, config.context_length),
                            generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = hf(context).logits
        got = ours(context)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)


def test_parameter_names_and_shapes_are_the_statements() -> None:
    c = SMALL
    kv = c.n_kv_head * c.head_dim
    expected = {"embed_tokens.weight": (c.vocab_size, c.n_embd), "norm.weight": (c.n_embd,),
                "lm_head.weight": (c.vocab_size, c.n_embd)}
    for i in range(c.n_layer):
        expected |= {
            f"layers.{i}.attn_norm.weight": (c.n_embd,),
            f"layers.{i}.attn.q_proj.weight": (c.n_embd, c.n_embd),
            f"layers.{i}.attn.k_proj.weight": (kv, c.n_embd),
            f"layers.{i}.attn.v_proj.weight": (kv, c.n_embd),
            f"layers.{i}.attn.o_proj.weight": (c.n_embd, c.n_embd),
            f"layers.{i}.mlp_norm.weight": (c.n_embd,),
            f"layers.{i}.mlp.gate_proj.weight": (c.n_hidden, c.n_embd),
            f"layers.{i}.mlp.up_proj.weight": (c.n_hidden, c.n_embd),
            f"layers.{i}.mlp.down_proj.weight": (c.n_embd, c.n_hidden),
        }
    got = {name: tuple(t.shape) for name, t in Llama(c).state_dict().items()}
    assert got == expected


@torch.no_grad()
def test_one_layer_by_hand() -> None:
    """One layer written out in float64 from the statement's formulas, no code shared."""
    config = LlamaConfig(vocab_size=11, context_length=8, n_layer=1, n_head=4, n_kv_head=2,
                         n_embd=16, n_hidden=24, rope_base=100.0)
    model = seeded(config, 3)
    w = {n: t.double() for n, t in model.state_dict().items()}
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2]])
    T, H, d = ids.shape[1], config.n_head, config.head_dim

    def rms(x, weight):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + config.norm_eps) * weight

    def turn(x):  # x (T, d) of one head: pair (i, i + d/2) turned by p * base^(-2i/d)
        out = x.clone()
        for p in range(T):
            for i in range(d // 2):
                a = p * config.rope_base ** (-2 * i / d)
                x1, x2 = x[p, i], x[p, i + d // 2]
                out[p, i] = x1 * math.cos(a) - x2 * math.sin(a)
                out[p, i + d // 2] = x2 * math.cos(a) + x1 * math.sin(a)
        return out

    x = w["embed_tokens.weight"][ids[0]]
    h = rms(x, w["layers.0.attn_norm.weight"])
    q, k, v = (h @ w[f"layers.0.attn.{n}_proj.weight"].T for n in "qkv")
    heads = []
    for head in range(H):
        kv = head // (H // config.n_kv_head)
        qh = turn(q[:, head * d:(head + 1) * d])
        kh = turn(k[:, kv * d:(kv + 1) * d])
        scores = qh @ kh.T / math.sqrt(d)
        scores = scores.masked_fill(torch.ones(T, T).triu(1).bool(), float("-inf"))
        heads.append(scores.softmax(-1) @ v[:, kv * d:(kv + 1) * d])
    x = x + torch.cat(heads, -1) @ w["layers.0.attn.o_proj.weight"].T
    h = rms(x, w["layers.0.mlp_norm.weight"])
    gate = h @ w["layers.0.mlp.gate_proj.weight"].T
    up = h @ w["layers.0.mlp.up_proj.weight"].T
    x = x + (gate * torch.sigmoid(gate) * up) @ w["layers.0.mlp.down_proj.weight"].T
    expected = rms(x, w["norm.weight"]) @ w["lm_head.weight"].T
    torch.testing.assert_close(model(ids)[0].double(), expected, rtol=1e-4, atol=1e-4)


@torch.no_grad()
def test_the_cache_gives_the_full_passes_logits() -> None:
    model = seeded(SMALL, 5)
    ids = torch.randint(SMALL.vocab_size, (2, 20), generator=torch.Generator().manual_seed(2))
    full = model(ids)
    logits, cache = model.forward_with_cache(ids[:, :7])
    pieces = [logits]
    for t in range(7, 20, 3):
        logits, cache = model.forward_with_cache(ids[:, t:t + 3], cache)
        pieces.append(logits)
    torch.testing.assert_close(torch.cat(pieces, 1), full, rtol=1e-5, atol=1e-5)
    # The cache holds n_kv_head heads, keys after rotation.
    assert cache[0][0].shape == (2, SMALL.n_kv_head, 20, SMALL.head_dim)


def test_rope_keeps_lengths_and_scores_depend_on_distance_only() -> None:
    x = torch.randn(1, 1, 6, 8, dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, 3, 10.0).norm(dim=-1), x.norm(dim=-1))
    q = torch.randn(8, dtype=torch.float64).expand(1, 1, 6, 8)
    k = torch.randn(8, dtype=torch.float64).expand(1, 1, 6, 8)
    scores = (apply_rope(q, 0, 10.0) @ apply_rope(k, 0, 10.0).transpose(-2, -1))[0, 0]
    for gap in range(-5, 6):
        diagonal = scores.diagonal(gap)
        # The angles are float32 (as Hugging Face's): equal to their rounding.
        torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal),
                                   rtol=1e-5, atol=1e-5)
    assert not torch.allclose(scores.diagonal(0)[0], scores.diagonal(1)[0])


def test_too_long_a_context_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="context_length=24"):
        Llama(SMALL)(torch.zeros(1, 25, dtype=torch.long))


def test_it_learns_with_the_gpts_loss() -> None:
    model = seeded(SMALL, 7).train()
    ids = torch.randint(SMALL.vocab_size, (4, 13), generator=torch.Generator().manual_seed(4))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        loss = F.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
