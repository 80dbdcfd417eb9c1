"""The shapes of the two shipped decoders, and nothing of how they compute.

A module problem hands the learner's class a config (`SwiGLU(config)`), so the config's
class is the one piece of the grader's model code a learner's worker holds. It lives
here, apart from the models: from an instance of it, nothing leads to the reference
GPT's or Llama's code (grader/sandbox/worker.py checks that none is in the worker).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    context_length: int = 48
    n_layer: int = 3
    n_head: int = 4
    n_embd: int = 64

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


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
