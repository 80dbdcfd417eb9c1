"""A small Llama-style decoder: RMSNorm, rotary positions, SwiGLU and grouped-query attention.

Track 4's modern GPT (problems 29 and 32-35) is written against this configuration; the
parameter names every problem fixes are listed in its statements.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class LlamaConfig:
    vocab_size: int
    context_length: int = 48
    n_layer: int = 3
    n_head: int = 4
    # Fewer key/value heads than query heads: each serves n_head // n_kv_head queries.
    n_kv_head: int = 2
    n_embd: int = 64
    # SwiGLU's hidden size: about 8/3 of n_embd, as Llama sizes it, rounded to 16.
    n_hidden: int = 176
    rope_base: float = 10000.0
    norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def to_dict(self) -> dict[str, int | float]:
        return asdict(self)
