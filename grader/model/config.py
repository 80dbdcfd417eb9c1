"""The shapes of the two shipped decoders, and how `train` trains them; nothing of how
they compute.

A module problem hands the learner's class a config (`SwiGLU(config)`), so the config's
class is the one piece of the grader's model code a learner's worker holds. It lives
here, apart from the models: from an instance of it, nothing leads to the reference
GPT's or Llama's code (grader/sandbox/worker/serve.py checks that none is in the worker).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from grader.locale import marked, translated


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


# How `gpt-kata train` trains, with or without --yours, in the kata and in a copy.
@dataclass(frozen=True)
class TrainSettings:
    steps: int = 3000
    batch_size: int = 64
    learning_rate: float = 3e-3
    min_learning_rate: float = 3e-4
    warmup_steps: int = 100
    weight_decay: float = 0.01
    eval_every: int = 100
    seed: int = 0
    threads: int = 2


# The modern decoder's shipped checkpoint: fewer steps than the GPT's 3000 (1200 left it at 91%
# well-formed sentences, short of the 95% bar), on one thread
# (two threads on a loaded 2-core machine fight, and a step takes ten times as long).
MODERN_SETTINGS = TrainSettings(steps=2400, threads=1)


# What every model the kata hands a learner's code says of a context longer than its
# window (the GPT, the modern GPT, the witness's model, the learners' copy's), in the
# learner's language; grader/grading/judging/refusals.py recognises it in any.
TOO_LONG = marked("the model sees at most context_length={window} tokens, but got {tokens}: "
                  "crop the context to its last {window} tokens")
NOT_TOKEN_IDS = marked("the model takes token ids as a LongTensor of shape (B, T); got {got}")
# Said by the witness's model and the learners' copy's: the GPT itself returns logits for
# none of them, which nothing can sample from.
NO_TOKENS = marked("the context holds no tokens; give the model at least one")


def too_long(window: int, tokens: int) -> str:
    return translated(TOO_LONG).format(window=window, tokens=tokens)


def not_token_ids(got: str) -> str:
    return translated(NOT_TOKEN_IDS).format(got=got)


def no_tokens() -> str:
    return translated(NO_TOKENS)
