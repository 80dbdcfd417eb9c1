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

from grader.model import artifacts
from grader.model.spec import ModelSpec

TEXT_LIMIT = 60  # characters of a long text shown, its end: where generation goes on
VALUES_LIMIT = 24  # tensor entries shown in full; larger tensors are summarised
STATE_SIZE = torch.Generator().get_state().numel()  # a CPU generator's state, in bytes


CASE_HEADING = "the inputs of case "  # then the case id: a fixed case's inputs
EXAMPLE_HEADING = "smallest failing input found:"  # a drawn example's, once shrunk


def show_inputs(lines: list[str], case_id: str | None) -> str:
    """The inputs of a failing call under their heading, one indented line each."""
    heading = f"{CASE_HEADING}{case_id}:" if case_id else EXAMPLE_HEADING
    return "\n".join([heading, *(f"  {line}" for line in lines)])


def inputs_of(named: dict[str, Any]) -> dict[str, str]:
    """Each argument by name with what it is, in the order of the signature: the
    failing call's inputs as a failure carries them (grader/grading/failures.py)."""
    vocab = vocabulary(named)
    return {name: shown(value, vocab if names_tokens(name) else None)
            for name, value in named.items()}


def input_lines(inputs: dict[str, str]) -> list[str]:
    """One line per argument, `name: what it is`, as the report shows them."""
    return [f"{name}: {what}" for name, what in inputs.items()]


def describe_inputs(named: dict[str, Any]) -> list[str]:
    """One line per argument, `name: what it is`, in the order of the signature."""
    return input_lines(inputs_of(named))


def answer_of(outcome: tuple[str, Any]) -> str:
    """What the learner's call gave, described as its inputs are: its value (a
    tensor's dtype, shape and values, a text), or the error it raised."""
    kind, value = outcome
    return f"raised {value}" if kind == "error" else shown(value, None)


def shown(value: Any, vocab: dict[int, str] | None) -> str:
    # The inputs are rendered while a failure is reported: an argument of a kind
    # not foreseen here must not turn the learner's failure into a grader error.
    try:
        return describe(value, vocab)
    except Exception:  # noqa: BLE001
        return f"a {type(value).__name__}"


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
           or is_weights(v) and v["model"].kind == "shipped" for v in named.values()):
        return artifacts.shipped_vocab()
    return None


def is_weights(value: Any) -> bool:
    """Whether `value` is a description of known weights (grader/model/parts.py's
    `weights(...)`), which a module problem's learner receives as `weights`."""
    return (isinstance(value, dict) and set(value) == {"model", "part", "head"}
            and isinstance(value["model"], ModelSpec))


def describe_weights(spec: dict[str, Any]) -> str:
    """What the known weights are, in the words of the statements: the part of
    the model by its state-dict prefix, and for one attention head its index."""
    model = spec["model"]
    if model.kind == "shipped":
        model = "the shipped model"
    else:
        c = model.config
        model = (f"a small GPT with random weights (vocab_size {c.get('vocab_size')}, "
                 f"context_length {c.get('context_length')}, n_layer {c.get('n_layer')}, "
                 f"n_head {c.get('n_head')}, n_embd {c.get('n_embd')}, seed {model.seed})")
    part = spec["part"]
    if spec["head"] is not None:
        return (f"attention head number {spec['head']} of {part} of {model} (its rows of "
                "qkv as query, key and value)")
    return f"the weights of {part} of {model}" if part else f"all the weights of {model}"


@cache
def shipped_corpus() -> str:
    return artifacts.CORPUS.read_text(encoding="utf-8")


def describe_text(text: str) -> str:
    """A text argument: whole if short, else its start and its length in characters."""
    if len(text) > 1000 and text == shipped_corpus():
        return f"the shipped corpus, data/corpus.txt ({len(text):,} characters)"
    if len(shown := repr(text)) <= 200:
        return shown
    return f"{text[:80]!r}... ({len(text):,} characters)"


def describe(value: Any, vocab: dict[int, str] | None = None) -> str:
    if isinstance(value, ModelSpec):
        return describe_model(value)
    if isinstance(value, torch.Generator):
        return f"a torch.Generator seeded with {value.initial_seed()}"
    if isinstance(value, torch.Tensor):
        return describe_tensor(value, vocab)
    if isinstance(value, str):
        return describe_text(value)
    if is_weights(value):
        return describe_weights(value)
    if isinstance(value, dict) and value and all(isinstance(v, str) for v in value.values()):
        return describe_vocab(value)
    if isinstance(value, int) and not isinstance(value, bool) and vocab and value in vocab:
        return f"{value} (the character {vocab[value]!r})"
    if isinstance(value, (list, tuple)) and vocab and value and all(
            isinstance(i, int) and not isinstance(i, bool) and i in vocab for i in value):
        return f"{short(repr(value))} = {spell(list(value), vocab)}"
    return short(repr(value))


def describe_model(spec: ModelSpec) -> str:
    if spec.kind == "shipped":
        return "the shipped model"
    if spec.kind == "hidden":  # grader/model/hidden.py
        from grader.model.hidden import declared

        return (f"{describe_model(declared(spec))}, with noise on its weights that the "
                "grader drew for this grade")
    c = spec.config
    return (f"a small untrained GPT (vocab_size {c.get('vocab_size')}, context_length "
            f"{c.get('context_length')}, {c.get('n_layer')} layer(s), {c.get('n_head')} "
            f"head(s), width {c.get('n_embd')}, weights seeded with {spec.seed})")


def describe_tensor(t: torch.Tensor, vocab: dict[int, str] | None) -> str:
    kind = f"{str(t.dtype).removeprefix('torch.')} tensor of shape {tuple(t.shape)}"
    if t.dtype == torch.uint8 and t.numel() == STATE_SIZE:
        return "a generator's state (a uint8 tensor from generator.get_state())"
    ids = t.flatten().tolist()
    if vocab and t.dtype == torch.long and ids and all(i in vocab for i in ids):
        rows = [spell(row, vocab) for row in t.tolist()] if t.dim() == 2 else [spell(ids, vocab)]
        return f"{kind}, the text {' / '.join(rows)}"
    if t.numel() <= VALUES_LIMIT:
        return f"{kind}: {values(t)}"
    one_row = t.dim() == 1 or (t.dim() == 2 and t.shape[0] == 1)
    if not t.is_floating_point():
        if one_row:
            flat = t.flatten().tolist()
            head, tail = ", ".join(map(str, flat[:6])), ", ".join(map(str, flat[-6:]))
            return f"{kind}: [{head}, ..., {tail}]"
        return f"{kind}, from {t.min().item()} to {t.max().item()}"
    finite = t[t.isfinite()]
    spread = (f", from {finite.min().item():.4g} to {finite.max().item():.4g}"
              if finite.numel() else "")
    infinite = int(t.isinf().sum())
    largest = ""
    if one_row and finite.numel():
        top = t.flatten().nan_to_num(neginf=float("-inf")).topk(min(3, t.numel()))
        largest = ", largest " + ", ".join(f"{v:.4g} at index {i}" for v, i in
                                           zip(top.values.tolist(), top.indices.tolist()))
    return kind + spread + (f", {infinite} of them -inf or inf" if infinite else "") + largest


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
        return f"...{text[-TEXT_LIMIT:]!r} ({len(ids)} tokens, the last {TEXT_LIMIT} shown)"
    return f"{text!r} ({len(ids)} token{'s' if len(ids) != 1 else ''})"


def describe_vocab(vocab: dict[int, str]) -> str:
    if vocab == artifacts.shipped_vocab():
        return f"the shipped vocabulary ({len(vocab)} characters)"
    return short(repr(vocab))


def short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"
