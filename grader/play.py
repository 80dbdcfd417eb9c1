"""Run a statement's examples yourself, in a Python session or a notebook.

Started in your kata folder::

    >>> from grader.play import *
    >>> globals().update(examples("top-k"))

The first line gives the shipped model (`model`), its vocabulary (`int_to_char`,
also called `vocab`), `context_length`, `encode(text)` (a (1, T) tensor of ids),
`decode(ids)`, `load_weights(module, weights)` (the grader's way of loading
known weights by name), `shipped_weights(part)` (the shipped model's weights of
one part, such as "blocks.1"), `torch` and `solution_of`. The second gives
`Solution` (yours, from problems/NN-slug/solution.py, read afresh at each call)
and the inputs the problem's statement uses in its examples, under the names it
uses (`prompt`, `probs`, `logits`, ...). A problem whose class is a module gives
that class under its own name instead (`Head`, `CausalSelfAttention`, `Block`,
`GPT`), with `config` and the known `weights` of its part of the shipped model.
After these two lines, every `>>>` line of the statement's examples runs as
written, and shows the statement's values: the second line sets torch to one
thread, as the grader computes.

This loads the model and torch, but neither pytest nor the grader's sandbox.
"""

from __future__ import annotations

from typing import Any

import torch

from grader.model import artifacts, parts
from grader.model.config import GPTConfig, LlamaConfig
from grader.model.spec import ModelSpec
from grader.registry import find
from grader.reuse import solution_of

__all__ = ["context_length", "decode", "encode", "examples", "int_to_char", "load_weights",
           "model", "shipped_weights", "solution_of", "torch", "vocab"]

# A copy of its own, without gradients: outputs print as plain tensors, as in the
# statements, and nothing done to it here reaches the grader's copy.


def _shipped_model() -> tuple[torch.nn.Module, bool]:
    """The shipped GPT, and whether it is an exported program: the grader's own, or in a
    learners' copy, which holds no GPT's code (problem 23's answer), the exported
    program its practice grade runs, with the parts the examples reach into."""
    try:
        return artifacts.load_model().requires_grad_(False), False
    except ModuleNotFoundError as missing:
        if missing.name != "grader.model.gpt":
            raise
    from gpt_kata_practice.shipped import shipped_gpt

    return shipped_gpt().requires_grad_(False), True


model, _exported = _shipped_model()
# The shipped GPT's sizes, from data/config.json, whichever model runs it.
config: GPTConfig = artifacts.load_config()
int_to_char: dict[int, str] = artifacts.shipped_vocab()
vocab = int_to_char
context_length: int = config.context_length

# The texts the statements' examples start from.
ONCE = "Once upon a time,"
THERE_WAS_A = "Once upon a time, there was a "
STORY = "Once upon a time, there was a little girl named Lily. She loved to play"
CAT = "the cat saw the"
THE_CAT = "The cat"

# The part of the shipped model each module problem's examples load, as a dotted
# path into its state dict, and the attention head (None: the whole part).
PARTS: dict[str, tuple[str, int | None]] = {
    "attention-head": ("blocks.0.attn", 0),
    "multi-head-attention": ("blocks.0.attn", None),
    "transformer-block": ("blocks.0", None),
    "gpt": ("", None),
}
# Where the loss's example cuts its two windows from the corpus.
LOSS_STARTS = (0, 100)


def encode(text: str) -> torch.Tensor:
    """Text to a (1, T) LongTensor of the shipped vocabulary's ids."""
    return artifacts.encode(text, int_to_char)


def decode(ids: Any) -> str:
    """Ids (a list, a (T,) or a (1, T) tensor) back to text."""
    if isinstance(ids, torch.Tensor):
        ids = ids.reshape(-1).tolist()
    return "".join(int_to_char[int(i)] for i in ids)


def next_logits(text: str) -> torch.Tensor:
    """The shipped model's logits for the character after `text`, shape (1, vocab_size)."""
    return model(encode(text))[:, -1, :]


def load_weights(module: torch.nn.Module, weights: dict[str, torch.Tensor]) -> torch.nn.Module:
    """Copy `weights` into the module's parameters of the same names, as the grader
    does, and return the module, in evaluation mode and without gradients (its
    outputs print as plain tensors).

    A name or a shape that differs is an error that lists what was expected and
    what was found; buffers (a causal mask, say) are left as they are.
    """
    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"{type(module).__name__} is not a torch.nn.Module")
    parts.load_known_weights(module, weights, type(module).__name__)
    return module.eval().requires_grad_(False)


def shipped_weights(part: str = "", head: int | None = None) -> dict[str, torch.Tensor]:
    """The shipped model's weights of one part, named as that part's own module
    names them: "" for the whole GPT, "blocks.1" for a block, "blocks.1.attn" for
    its attention, and with `head` one head of that attention (query, key, value).
    """
    found = parts.state_dict(parts.weights(ModelSpec("shipped"), part, None))
    if not found:
        raise ValueError(f"the shipped model has no part {part!r}: its parts are '' (all), "
                         f"'blocks.0' to 'blocks.{config.n_layer - 1}', and in each "
                         "block 'attn', 'mlp', 'ln_1', 'ln_2'")
    if head is None:
        return found
    if "qkv.weight" not in found or not 0 <= head < config.n_head:
        raise ValueError(f"head={head} needs an attention layer ('blocks.N.attn') and a head "
                         f"from 0 to {config.n_head - 1}")
    return parts.head_slice(found, config, head)


def _block_input(text: str) -> torch.Tensor:
    """What the shipped model's first block receives for `text`: (1, T, n_embd)."""
    ids = encode(text)
    return model.token_embedding(ids) + model.position_embedding(torch.arange(ids.shape[1]))


# The small fresh GPT that the examples of problems 25, 28 and 30 train, and its seed.
SMALL_GPT = {"vocab_size": len(int_to_char), "context_length": 8, "n_layer": 1, "n_head": 2,
             "n_embd": 16}
# What a release exports for them: a copy builds these GPTs from programs.
TRAINED_IN_EXAMPLES = ((SMALL_GPT, 0),)


def _trainable(config: dict[str, int], seed: int) -> torch.nn.Module:
    """A fresh GPT drawn from `seed`, as the training problems' checks build theirs,
    leaving the caller's random state alone; in a copy, from its exported program."""
    if _exported:
        from gpt_kata_practice.training import trainable_model

        return trainable_model(config, seed)
    return artifacts.trainable_model(config, seed)


def _training_inputs() -> dict[str, Any]:
    """Problem 25's example: a small fresh GPT, its AdamW, and five batches of the
    corpus drawn as problem 19 draws them."""
    data = encode(artifacts.corpus_text())[0]
    small = _trainable(SMALL_GPT, 0)
    optimizer = torch.optim.AdamW(small.parameters(), lr=1e-2, weight_decay=0.01)
    generator = seeded(0)
    batches = []
    for _ in range(5):
        starts = torch.randint(len(data) - 8, (4,), generator=generator)
        batches.append((torch.stack([data[s:s + 8] for s in starts]),
                        torch.stack([data[s + 1:s + 9] for s in starts])))
    return {"data": data, "model": small, "optimizer": optimizer, "batches": batches}


def seeded(seed: int) -> torch.Generator:
    """A generator of its own, seeded: the examples draw the same numbers each time."""
    return torch.Generator().manual_seed(seed)


def _module_inputs(slug: str) -> dict[str, Any]:
    names: dict[str, Any] = {"config": config, "weights": shipped_weights(*PARTS[slug])}
    if slug == "gpt":
        names["context"] = encode(THERE_WAS_A)
    elif slug == "transformer-block":
        names["x"] = _block_input(THE_CAT)
    else:  # an attention layer reads the first LayerNorm of the block's input
        names["x"] = model.blocks[0].ln_1(_block_input(THE_CAT))
    return names


def _adamw_inputs() -> dict[str, Any]:
    """Problem 26's example: a small weight, its gradient, and AdamW's state at the start."""
    p = torch.tensor([[0.5, -0.3, 0.1], [0.2, 0.3, -0.4]])
    g = torch.tensor([[0.1, -0.2, 1e-3], [-0.5, 0.0, 2.0]])
    return {"p": p, "g": g, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}


def _clipping_inputs() -> dict[str, Any]:
    """Problem 28's example: problem 25's small GPT after backward() on its first batch."""
    names = _training_inputs()
    small, (x, y) = names["model"], names["batches"][0]
    with torch.enable_grad():
        logits = small(x)
        torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1)).backward()
    return {"model": small}


def _rms_norm_inputs() -> dict[str, Any]:
    """Problem 29's example: the shipped first LayerNorm's weight as the gain, on what
    the first block receives."""
    return {"config": config, "weights": {"weight": shipped_weights("blocks.0.ln_1")[
        "weight"]}, "x": _block_input(THE_CAT), "ln_1": model.blocks[0].ln_1}


def _train_loop_inputs() -> dict[str, Any]:
    """Problem 30's example: problem 25's small fresh GPT and its AdamW, and the
    shipped corpus split nine tenths for training and one for validation, as
    `gpt-kata train` splits it."""
    names = _training_inputs()
    data = names["data"]
    split = int(0.9 * len(data))
    return {"model": names["model"], "optimizer": names["optimizer"], "data": data,
            "train_data": data[:split], "val_data": data[split:]}


def _rope_inputs() -> dict[str, Any]:
    """Problem 32's example: the shipped first block's queries and keys for "The cat",
    split into heads, and a small head of ones and zeros whose turns show cos and sin."""
    block = model.blocks[0]
    x = block.ln_1(_block_input(THE_CAT))
    B, T, C = x.shape
    H = config.n_head
    q, k, _ = block.attn.qkv(x).view(B, T, 3, H, C // H).permute(2, 0, 3, 1, 4)
    ones = torch.zeros(1, 1, 4, 4)
    ones[..., :2] = 1.0
    return {"q": q.contiguous(), "k": k.contiguous(), "ones": ones}


def _llama_config() -> LlamaConfig:
    return LlamaConfig(vocab_size=len(int_to_char))


def _swiglu_inputs() -> dict[str, Any]:
    """Problem 33's example: a SwiGLU's three projections drawn at a linear layer's
    scale (seed 0), on what the shipped first block's MLP reads for "The cat"."""
    config = _llama_config()
    generator = seeded(0)
    shapes = {"gate_proj.weight": (config.n_hidden, config.n_embd),
              "up_proj.weight": (config.n_hidden, config.n_embd),
              "down_proj.weight": (config.n_embd, config.n_hidden)}
    weights = {name: torch.randn(shape, generator=generator) / shape[1] ** 0.5
               for name, shape in shapes.items()}
    block, h = model.blocks[0], _block_input(THE_CAT)
    x = block.ln_2(h + block.attn(block.ln_1(h))[0])
    return {"config": config, "weights": weights, "x": x, "mlp": block.mlp}


def _grouped_query_inputs() -> dict[str, Any]:
    """Problem 34's example: the shipped first block's attention as a grouped-query one
    (its key and value heads averaged in pairs, no biases), on what it reads for "The cat"."""
    config = _llama_config()
    found = shipped_weights("blocks.0.attn")
    C, hd = config.n_embd, config.head_dim
    q, k, v = found["qkv.weight"].split(C)

    def pooled(w: torch.Tensor) -> torch.Tensor:
        return w.reshape(config.n_kv_head, -1, hd, C).mean(dim=1).reshape(-1, C)

    weights = {"q_proj.weight": q, "k_proj.weight": pooled(k), "v_proj.weight": pooled(v),
               "o_proj.weight": found["proj.weight"]}
    return {"config": config, "weights": weights,
            "x": model.blocks[0].ln_1(_block_input(THE_CAT))}


def _modern_gpt_inputs() -> dict[str, Any]:
    """Problem 35's example: the shipped modern model's config and weights
    (data/llama.safetensors), the prompt of problem 23, and the modern model itself."""
    if _exported:  # a stand-in that knows the modern model's logits on MODERN_PROMPTS
        from gpt_kata_practice.shipped import modern_gpt

        modern = modern_gpt()
        weights = {k: v.clone() for k, v in (artifacts.shipped_weights()[1] or {}).items()}
    else:
        modern = artifacts.load_llama().requires_grad_(False)
        weights = dict(modern.state_dict())
    return {"config": modern.config, "weights": weights,
            "context": encode(MODERN_PROMPTS[0]), "modern": modern}


# The prompts problem 35's example runs the shipped modern model on: a release stores
# its logits on them, for a copy holds no modern model (its graph is Track 4's answer).
MODERN_PROMPTS = (THERE_WAS_A,)


# The inputs of Track 4's statements, by slug. Problem 31 learns its merges from the
# corpus, as problem 17 numbers its characters.
TRAINING_INPUTS = {"adamw": _adamw_inputs, "clip-grad-norm": _clipping_inputs,
                   "rms-norm": _rms_norm_inputs, "train-loop": _train_loop_inputs,
                   "bpe": lambda: {"corpus": artifacts.corpus_text()}, "rope": _rope_inputs,
                   "swiglu": _swiglu_inputs, "grouped-query-attention": _grouped_query_inputs,
                   "modern-gpt": _modern_gpt_inputs}


def _inputs(slug: str) -> dict[str, Any]:
    """The named inputs of each statement's examples, built when asked for."""
    if slug in TRAINING_INPUTS:
        return TRAINING_INPUTS[slug]()
    if slug in PARTS:
        return _module_inputs(slug)
    if slug == "vocabulary":
        return {"corpus": artifacts.corpus_text()}
    if slug == "train-step":
        return _training_inputs()
    if slug in ("windows", "batches", "loss"):
        corpus = artifacts.corpus_text()
        data = encode(corpus)[0]
        names = {"corpus": corpus, "data": data}
        if slug == "loss":
            T = context_length
            names["targets"] = torch.stack([data[s + 1:s + 1 + T] for s in LOSS_STARTS])
            names["logits"] = model(torch.stack([data[s:s + T] for s in LOSS_STARTS]))
        return names
    if slug == "crop-context":
        return {"story": encode(STORY)}
    if slug == "sample":
        return {"probs": torch.softmax(next_logits(THERE_WAS_A), dim=-1)}
    if slug in ("temperature", "top-k", "top-p", "top-k-top-p"):
        return {"logits": next_logits(THERE_WAS_A)}
    if slug == "no-repeat-ngram":
        return {"logits": next_logits(CAT)[0], "ids": encode(CAT)[0].tolist()}
    if slug == "stream":
        return {"context": encode(ONCE)}
    if slug in ("generate", "greedy", "eos-stop", "kv-cache", "sampler"):
        return {"prompt": encode(ONCE)}
    return {}


def examples(problem: str | int, solution: type | None = None) -> dict[str, Any]:
    """The names a problem's statement uses in its examples.

    problem: slug, number or folder, as on the command line ("top-k", 9, "09-top-k").
    solution: the problem's class (`Solution`, or the module it asks for, such as
        `Head`); by default yours, from your problems/, under that same name.
    """
    # The statements' values were computed with one thread, as the grader computes:
    # a sum split across threads rounds otherwise (with two, an example of problem 22
    # shows -0.2414 where its statement says -0.2415).
    torch.set_num_threads(1)
    found = find(str(problem))
    if solution is None:
        solution = solution_of(found.folder, finished=False, name=found.class_name)
    names: dict[str, Any] = {name: globals()[name] for name in __all__ if name != "examples"}
    return {**names, found.class_name: solution, **_inputs(found.slug)}
