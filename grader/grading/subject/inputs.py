"""A failing call's arguments, shown as the learner's method received them.

A check builds its arguments in the grader's own terms (a `ModelSpec` for a
model, a generator and its state); the learner's method receives a model, text
ids, a vocabulary. Each argument is shown under the name the contract declares,
in those terms: the text that token ids spell where the call carries a
vocabulary (or runs the shipped model, whose vocabulary the learner knows), a
tensor's shape and values, a generator's seed.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import torch

from grader.locale import tr
from grader.model import artifacts
from grader.model.parts import is_description
from grader.model.spec import ModelSpec
from grader.wording import a_kind

TEXT_LIMIT = 60  # characters of a long text shown, its end: where generation goes on
VALUES_LIMIT = 24  # tensor entries shown in full; larger tensors are summarised
ITEMS_LIMIT = 8  # items of a list, tuple or dict of tensors described one by one
STATE_SIZE = torch.Generator().get_state().numel()  # a CPU generator's state, in bytes


def show_inputs(lines: list[str], case_id: str | None) -> str:
    """The inputs of a failing call under their heading, one indented line each: a
    fixed case's under its id, a drawn example's once shrunk."""
    heading = (tr("the inputs of case {case}:", case=case_id) if case_id
               else tr("smallest failing input found:"))
    return "\n".join([heading, *(f"  {line}" for line in lines)])


def inputs_of(named: dict[str, Any]) -> dict[str, str]:
    """Each argument by name with what it is, in the order of the signature: the
    failing call's inputs as a failure carries them (grader/grading/values/failures.py)."""
    vocab = vocabulary(named)
    return {name: shown(value, vocab if names_tokens(name) else None)
            for name, value in named.items()}


def describe_inputs(named: dict[str, Any]) -> list[str]:
    """One line per argument, `name: what it is`, in the order of the signature."""
    return [f"{name}: {what}" for name, what in inputs_of(named).items()]


def answer_of(outcome: tuple[str, Any]) -> str:
    """What the learner's call gave, described as its inputs are: its value (a
    tensor's dtype, shape and values, a text), or the error it raised."""
    kind, value = outcome
    return tr("raised {error}", error=value) if kind == "error" else shown(value, None)


def shown(value: Any, vocab: dict[int, str] | None) -> str:
    # The inputs are rendered while a failure is reported: an argument of a kind
    # not foreseen here must not turn the learner's failure into a grader error.
    try:
        return describe(value, vocab)
    except Exception:  # noqa: BLE001
        return a_kind(type(value).__name__)


def names_tokens(name: str) -> bool:
    """Whether a parameter holds token ids (so its ints are characters of the vocabulary)."""
    return name in ("context", "token_ids", "prompt_ids", "eos_id") or name.endswith("_id")


def vocabulary(named: dict[str, Any]) -> dict[int, str] | None:
    """The vocabulary the call's token ids spell, if the learner can know it."""
    for value in named.values():
        if isinstance(value, dict) and value and all(
                isinstance(k, int) and isinstance(v, str) for k, v in value.items()):
            return value
    if any(isinstance(v, ModelSpec) and v.kind == "shipped"
           or is_description(v) and v["model"].kind == "shipped" for v in named.values()):
        return artifacts.shipped_vocab()
    return None


def describe_weights(spec: dict[str, Any]) -> str:
    """What the known weights are, in the words of the statements: the part of
    the model by its state-dict prefix, and for one attention head its index."""
    model = spec["model"]
    if model.kind == "shipped":
        model = tr("the shipped model")
    else:
        c = model.config
        model = tr("a small GPT with random weights (vocab_size {vocab_size}, context_length "
                   "{context_length}, n_layer {n_layer}, n_head {n_head}, n_embd {n_embd}, seed "
                   "{seed})", vocab_size=c.get("vocab_size"),
                   context_length=c.get("context_length"), n_layer=c.get("n_layer"),
                   n_head=c.get("n_head"), n_embd=c.get("n_embd"), seed=model.seed)
    part = spec["part"]
    if spec["head"] is not None:
        return tr("attention head number {head} of {part} of {model} (its rows of qkv as "
                  "query, key and value)", head=spec["head"], part=part, model=model)
    return (tr("the weights of {part} of {model}", part=part, model=model) if part
            else tr("all the weights of {model}", model=model))


@cache
def shipped_corpus() -> str:
    return artifacts.corpus_text()


def describe_text(text: str) -> str:
    """A text argument: whole if short, else its start and its length in characters."""
    if len(text) > 1000 and text == shipped_corpus():
        return tr("the shipped corpus, data/corpus.txt ({n:,} characters)", n=len(text))
    if len(shown := repr(text)) <= 200:
        return shown
    return tr("{start}... ({n:,} characters)", start=repr(text[:80]), n=len(text))


def describe(value: Any, vocab: dict[int, str] | None = None) -> str:
    if isinstance(value, ModelSpec):
        return describe_model(value)
    if isinstance(value, torch.Generator):
        return tr("a torch.Generator seeded with {seed}", seed=value.initial_seed())
    if isinstance(value, torch.Tensor):
        return describe_tensor(value, vocab)
    if isinstance(value, str):
        return describe_text(value)
    if is_description(value):
        return describe_weights(value)
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return describe_vocab(value)
    if isinstance(value, int) and not isinstance(value, bool) and vocab and value in vocab:
        return tr("{value} (the character {char})", value=value, char=repr(vocab[value]))
    if isinstance(value, (list, tuple)) and vocab and value and all(
            isinstance(i, int) and not isinstance(i, bool) and i in vocab for i in value):
        return f"{short(repr(value))} = {spell(list(value), vocab)}"
    if isinstance(value, (list, tuple, dict)) and holds_tensors(value):
        return describe_container(value, vocab)
    return short(repr(value))


def holds_tensors(value: Any, depth: int = 3) -> bool:
    """Whether a list, tuple or dict holds a tensor, a few levels down (a KV cache, a
    state dict): then its tensors are described one by one, not printed."""
    if isinstance(value, torch.Tensor):
        return True
    if depth == 0:
        return False
    items = value.values() if isinstance(value, dict) else value
    return isinstance(value, (list, tuple, dict)) and any(
        holds_tensors(item, depth - 1) for item in list(items)[:ITEMS_LIMIT])


def describe_container(value: list | tuple | dict, vocab: dict[int, str] | None) -> str:
    """Each item described as an argument is, the first ITEMS_LIMIT of them."""
    if isinstance(value, dict):
        parts = [f"{short(repr(key), 60)}: {describe(item, vocab)}"
                 for key, item in list(value.items())[:ITEMS_LIMIT]]
        ends = "{}"
    else:
        parts = [describe(item, vocab) for item in value[:ITEMS_LIMIT]]
        ends = "()" if isinstance(value, tuple) else "[]"
    if len(value) > ITEMS_LIMIT:
        parts.append(tr("and {n} more", n=len(value) - ITEMS_LIMIT))
    return ends[0] + "; ".join(parts) + ends[1]


def describe_model(spec: ModelSpec) -> str:
    if spec.kind == "shipped":
        return tr("the shipped model")
    if spec.kind == "hidden":  # grader/model/hidden_weights.py
        from grader.model.hidden_weights import declared

        return tr("{model}, with noise on its weights that the grader drew for this grade",
                  model=describe_model(declared(spec)))
    c = spec.config
    return tr("a small untrained GPT (vocab_size {vocab_size}, context_length "
              "{context_length}, n_layer {n_layer}, n_head {n_head}, n_embd {n_embd}, "
              "weights seeded with {seed})", vocab_size=c.get("vocab_size"),
              context_length=c.get("context_length"), n_layer=c.get("n_layer"),
              n_head=c.get("n_head"), n_embd=c.get("n_embd"), seed=spec.seed)


def describe_tensor(t: torch.Tensor, vocab: dict[int, str] | None) -> str:
    kind = tr("{dtype} tensor of shape {shape}", dtype=str(t.dtype).removeprefix("torch."),
              shape=tuple(t.shape))
    if t.dtype == torch.uint8 and t.numel() == STATE_SIZE:
        return tr("a generator's state (a uint8 tensor from generator.get_state())")
    ids = t.flatten().tolist()
    if vocab and t.dtype == torch.long and ids and all(i in vocab for i in ids):
        rows = [spell(row, vocab) for row in t.tolist()] if t.dim() == 2 else [spell(ids, vocab)]
        return f"{kind}, " + tr("the text {text}", text=" / ".join(rows))
    if t.numel() <= VALUES_LIMIT:
        return f"{kind}: {values(t)}"
    one_row = t.dim() == 1 or (t.dim() == 2 and t.shape[0] == 1)
    if not t.is_floating_point():
        if one_row:
            flat = t.flatten().tolist()
            head, tail = ", ".join(map(str, flat[:6])), ", ".join(map(str, flat[-6:]))
            return f"{kind}: [{head}, ..., {tail}]"
        return f"{kind}, " + tr("from {low} to {high}", low=t.min().item(), high=t.max().item())
    finite = t[t.isfinite()]
    clauses = [kind]
    if finite.numel():
        clauses.append(tr("from {low:.4g} to {high:.4g}", low=finite.min().item(),
                          high=finite.max().item()))
    infinite = int(t.isinf().sum())
    if infinite:
        clauses.append(tr("{n} of them -inf or inf", n=infinite))
    if one_row and finite.numel():
        top = t.flatten().nan_to_num(neginf=float("-inf")).topk(min(3, t.numel()))
        clauses.append(tr("largest {values}", values=", ".join(
            tr("{value:.4g} at index {index}", value=v, index=i)
            for v, i in zip(top.values.tolist(), top.indices.tolist()))))
    return ", ".join(clauses)


def values(t: torch.Tensor) -> str:
    if t.is_floating_point():
        def fmt(x: Any) -> Any:
            return [fmt(y) for y in x] if isinstance(x, list) else float(f"{x:.4g}")
        return str(fmt(t.tolist()))
    return str(t.tolist())


def spell(ids: list[int], vocab: dict[int, str]) -> str:
    """The text the ids spell, its end only if long, with its length in tokens."""
    text = "".join(vocab[i] for i in ids)
    if len(text) > TEXT_LIMIT:
        return tr("...{text} ({n} tokens, the last {shown} shown)", text=repr(text[-TEXT_LIMIT:]),
                  n=len(ids), shown=TEXT_LIMIT)
    return (tr("{text} ({n} token)", text=repr(text), n=len(ids)) if len(ids) == 1
            else tr("{text} ({n} tokens)", text=repr(text), n=len(ids)))


def describe_vocab(vocab: dict[int, str]) -> str:
    if vocab == artifacts.shipped_vocab():
        return tr("the shipped vocabulary ({n} characters)", n=len(vocab))
    return short(repr(vocab))


def short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + tr("... ({n} characters)", n=len(text))
