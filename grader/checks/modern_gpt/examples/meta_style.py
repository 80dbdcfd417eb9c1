"""Meta's llama reference model, model.py, in its own shape: RMSNorm with _norm in float,
precomputed complex frequencies (on the halves' pairs, as the statement pairs them), a
Transformer whose layers are TransformerBlocks, and GQA by einsum over grouped queries."""

import math

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


def precompute_freqs_cis(dim: int, end: int, theta: float):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, dtype=torch.float32)
    return torch.polar(torch.ones(end, dim // 2), torch.outer(t, freqs))


def apply_rotary_emb(x, freqs_cis):
    # x (B, T, H, D): dimension i paired with i + D/2 as the real and imaginary parts.
    half = x.shape[-1] // 2
    x_ = torch.complex(x[..., :half].float(), x[..., half:].float())
    turned = x_ * freqs_cis[None, :, None, :]
    return torch.cat([turned.real, turned.imag], dim=-1).type_as(x)


class Attention(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.n_heads, self.n_kv_heads = args.n_head, args.n_kv_head
        self.head_dim = args.n_embd // args.n_head
        self.q_proj = nn.Linear(args.n_embd, args.n_head * self.head_dim, bias=False)
        self.k_proj = nn.Linear(args.n_embd, self.n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(args.n_embd, self.n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(args.n_head * self.head_dim, args.n_embd, bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq = self.q_proj(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.k_proj(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xv = self.v_proj(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, freqs_cis), apply_rotary_emb(xk, freqs_cis)
        group = self.n_heads // self.n_kv_heads
        # Query heads g*group .. (g+1)*group - 1 share key head g.
        xq = xq.view(bsz, seqlen, self.n_kv_heads, group, self.head_dim)
        scores = torch.einsum("bqkgd,bskd->bkgqs", xq, xk) / math.sqrt(self.head_dim)
        scores = F.softmax(scores + mask, dim=-1)
        out = torch.einsum("bkgqs,bskd->bqkgd", scores, xv)
        return self.o_proj(out.reshape(bsz, seqlen, -1))


class FeedForward(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=False)
        self.up_proj = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class TransformerBlock(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.attn = Attention(args)
        self.mlp = FeedForward(args.n_embd, args.n_hidden)
        self.attn_norm = RMSNorm(args.n_embd, eps=args.norm_eps)
        self.mlp_norm = RMSNorm(args.n_embd, eps=args.norm_eps)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attn(self.attn_norm(x), freqs_cis, mask)
        return h + self.mlp(self.mlp_norm(h))


class Llama(nn.Module):
    def __init__(self, params):
        super().__init__()
        self.embed_tokens = nn.Embedding(params.vocab_size, params.n_embd)
        self.layers = torch.nn.ModuleList()
        for _ in range(params.n_layer):
            self.layers.append(TransformerBlock(params))
        self.norm = RMSNorm(params.n_embd, eps=params.norm_eps)
        self.lm_head = nn.Linear(params.n_embd, params.vocab_size, bias=False)
        self.freqs_cis = precompute_freqs_cis(params.n_embd // params.n_head,
                                              params.context_length, params.rope_base)

    def forward(self, tokens):
        _bsz, seqlen = tokens.shape
        h = self.embed_tokens(tokens)
        freqs_cis = self.freqs_cis[:seqlen]
        mask = torch.full((seqlen, seqlen), float("-inf")).triu(1)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.lm_head(self.norm(h)).float()
