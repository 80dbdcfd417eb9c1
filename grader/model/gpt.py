"""A small GPT-2-style decoder, written to be read in one sitting.

`model(context)` takes token ids of shape (B, T) with T <= context_length and
returns logits of shape (B, T, vocab_size): one score per possible next token at
every position. There is no softmax inside; turning scores into probabilities and
choosing a token is the learner's job.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from grader.model.config import GPTConfig, LlamaConfig, not_token_ids, too_long

KVCache = tuple[torch.Tensor, torch.Tensor]


@functools.lru_cache(maxsize=256)
def causal_mask(queries: int, keys: int, device: torch.device) -> torch.Tensor:
    """0 where query i (the last `queries` of `keys` positions) may look, -inf after.

    Added to the scores: x + 0 is x exactly, so this gives what masked_fill would,
    in one operation instead of four, made once per shape, and outside inference
    mode, so that a training pass can use a mask an inference pass made first.
    """
    with torch.inference_mode(False):
        allowed = torch.ones(queries, keys, dtype=torch.bool, device=device).tril(keys - queries)
        return torch.zeros(queries, keys, device=device).masked_fill(~allowed, float("-inf"))


class CausalSelfAttention(nn.Module):
    """Every position attends to itself and the positions before it, never after."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.n_head = config.n_head
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(
        self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        B, T, C = x.shape
        head_size = C // self.n_head
        # (B, T, 3C) -> three of (B, n_head, T, head_size): each head attends on its own.
        q, k, v = self.qkv(x).view(B, T, 3, self.n_head, head_size).permute(2, 0, 3, 1, 4)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)
            v = torch.cat([cache[1], v], dim=2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(head_size)
        # With a cache the T new queries sit at the end of the key sequence, so
        # query i may look at keys up to (past + i); the others get -inf.
        scores = scores + causal_mask(T, k.shape[2], x.device)
        y = F.softmax(scores, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y), (k, v)


class MLP(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(
        self, x: torch.Tensor, cache: tuple[torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        attended, new_cache = self.attn(self.ln_1(x), cache)
        x = x + attended
        x = x + self.mlp(self.ln_2(x))
        return x, new_cache


class Decoder(nn.Module):
    """What the GPT and the modern decoder (grader/model/llama.py) share: their contract,
    `model(context)` as the logits of `forward_with_cache`, the contexts they refuse,
    a cache of one (keys, values) per layer, and GPT-2's initial weights."""

    def __init__(self, config: GPTConfig | LlamaConfig) -> None:
        super().__init__()
        self.config = config
        self.context_length = config.context_length

    def init_weights(self) -> None:
        """Normal weights of std 0.02 and zero biases, as GPT-2 starts, drawn once every
        layer is built, in the order the layers were made."""
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        logits, _ = self.forward_with_cache(context)
        return logits

    def past_of(self, context: torch.Tensor, cache: list[KVCache] | None) -> int:
        """How many tokens the cache holds, before the new ones of `context`; a context
        that is no (B, T) batch of token ids, or that overflows the window, refused."""
        if context.dim() != 2 or context.dtype != torch.long:
            raise ValueError(not_token_ids(f"{context.dtype} of shape {tuple(context.shape)}"))
        past = 0 if cache is None else cache[0][0].shape[2]
        if past + context.shape[1] > self.context_length:
            raise ValueError(too_long(self.context_length, past + context.shape[1]))
        return past

    @staticmethod
    def through(layers: nn.ModuleList, x: torch.Tensor, cache: list[KVCache] | None
                ) -> tuple[torch.Tensor, list[KVCache]]:
        """`x` through the layers, each with its own part of the cache; the new cache."""
        new_cache = []
        for i, layer in enumerate(layers):
            x, layer_cache = layer(x, None if cache is None else cache[i])
            new_cache.append(layer_cache)
        return x, new_cache


class GPT(Decoder):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__(config)
        self.token_embedding = nn.Embedding(config.vocab_size, config.n_embd)
        self.position_embedding = nn.Embedding(config.context_length, config.n_embd)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.init_weights()

    def forward_with_cache(self, context: torch.Tensor, cache: list[KVCache] | None = None
                           ) -> tuple[torch.Tensor, list[KVCache]]:
        """Forward pass that also returns each layer's keys and values.

        `cache` holds the keys and values of the tokens already seen; `context`
        then holds only the new tokens, which sit at positions past..past+T-1.
        """
        past = self.past_of(context, cache)
        positions = torch.arange(past, past + context.shape[1], device=context.device)
        x = self.token_embedding(context) + self.position_embedding(positions)
        x, new_cache = self.through(self.blocks, x, cache)
        return self.head(self.ln_f(x)), new_cache
