"""Known weights for the parts of a GPT a learner writes, and the one way they are run.

A learner's module (an attention head, the attention layer, a block, the GPT)
is graded by loading known weights into it through the parameter names its
statement fixes, so that however the learner initialises, the same weights
give the same output. The names are the shipped checkpoint's
(grader/model/gpt.py): a part's weights are a sub-dictionary of a GPT's state
dict, so that a learner's GPT loaded with data/model.safetensors is the
shipped model.

Weights travel to the worker as a description (`weights(...)`), never as
tensors: both sides build the same state dict from it, the worker from the
shipped model it already holds.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from typing import Any

import torch

# Only the configs: a module problem's worker runs this file and must hold none of the
# reference models' code (grader/sandbox/worker/serve.py checks it), so the weights a
# description stands for are made in the grader (`resolved`), where the models are.
from grader.locale import marked, tr, translated
from grader.model.config import GPTConfig, LlamaConfig
from grader.model.spec import ModelSpec

# Random weights are drawn from N(0, RANDOM_SCALE): large enough that attention
# scores of order one make the softmax far from uniform, so that a mistake such
# as a wrong scale changes the output by much more than the tolerances. (A fresh
# GPT's init, N(0, 0.02), gives nearly uniform attention, hiding those mistakes.)
RANDOM_SCALE = 0.5


# How many parameter names a message lists before it says "and N more".
SHOWN_NAMES = 12


class KnownWeightsError(Exception):
    """The known weights cannot be loaded into the learner's module: a wrong shape."""


class ParameterNamesError(KnownWeightsError):
    """The learner's class is not a module with the parameters its statement fixes:
    no check can run, whatever its config."""


def weights(model: ModelSpec, part: str = "", head: int | None = None) -> dict[str, Any]:
    """A description of the weights of `part` of a model (a dotted path such as
    "blocks.0.attn"; "" for the whole GPT), and of one attention head of it.

    A random ModelSpec stands for a GPT of its config whose every parameter is
    drawn from N(0, RANDOM_SCALE) by a generator seeded with its seed.
    """
    return {"model": model, "part": part, "head": head}


def config_from(config: dict[str, Any]) -> GPTConfig | LlamaConfig:
    """The config a module is built with: a Llama-style one (grader/model/llama.py)
    for the modern decoder's parts, which have key/value heads of their own."""
    return LlamaConfig(**config) if "n_kv_head" in config else GPTConfig(**config)


def config_of(model: ModelSpec) -> GPTConfig:
    if model.kind == "shipped":
        from grader.model import artifacts

        try:
            return artifacts.shipped_model().config
        except ModuleNotFoundError:  # a learners' copy: no GPT's code, its config file
            return artifacts.load_config()
    return GPTConfig(**model.config)


def _whole(model: ModelSpec) -> dict[str, torch.Tensor]:

    if model.kind == "shipped":
        return {k: v.detach().clone() for k, v in _shipped_tensors().items()}
    # The names and shapes of a GPT of this config, drawn afresh in a fixed order.
    generator = torch.Generator().manual_seed(model.seed)
    shapes = _shapes(tuple(sorted(model.config.items())))
    return {k: torch.randn(shape, generator=generator) * RANDOM_SCALE
            for k, shape in shapes.items()}


def _shipped_tensors() -> dict[str, torch.Tensor]:
    """The shipped GPT's weights in its own order; in a learners' copy, which holds no
    GPT's code (problem 23's answer), the checkpoint's tensors by the same names."""
    from grader.model import artifacts

    try:
        return artifacts.shipped_model().state_dict()
    except ModuleNotFoundError as missing:
        if missing.name != "grader.model.gpt":
            raise
    return artifacts.shipped_weights()[0]


@functools.lru_cache(maxsize=32)
def _shapes(config: tuple[tuple[str, int], ...]) -> dict[str, torch.Size]:
    """A GPT's parameter names and shapes, in order. Kept: a grade of every module
    problem asks for hundreds. Built on the CPU, its draws taken from a forked
    generator (the global one is left as it was): on the meta device, initialising
    it goes through torch's reference ops, which import torch._dynamo (a second)."""
    from grader.model.gpt import GPT

    with torch.random.fork_rng(devices=[]):
        return {k: v.shape for k, v in GPT(GPTConfig(**dict(config))).state_dict().items()}


def given(tensors: dict[str, torch.Tensor]) -> dict[str, Any]:
    """A description of weights given as they are: a part no GPT of the shipped
    kind has (RMSNorm's gain), named as the learner's module must name it."""
    return {"tensors": dict(tensors)}


def is_description(value: Any) -> bool:
    """Whether `value` is what `weights` returns: weights named, not given."""
    return (isinstance(value, dict) and set(value) == {"model", "part", "head"}
            and isinstance(value["model"], ModelSpec))


def resolved(value: Any) -> Any:
    """`value` with a description of weights made into the weights themselves, given:
    how the grader hands a module problem's worker its weights, so that the worker
    needs no model of the grader's to make them."""
    return given(state_dict(value)) if is_description(value) else value


def state_dict(spec: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The weights a description stands for, as the learner's module must name them."""
    if "tensors" in spec:
        return {k: v.detach().clone() for k, v in spec["tensors"].items()}
    whole = _whole(spec["model"])
    part = spec["part"]
    prefix = f"{part}." if part else ""
    found = {k.removeprefix(prefix): v for k, v in whole.items() if k.startswith(prefix)}
    if spec["head"] is None:
        return found
    return head_slice(found, config_of(spec["model"]), spec["head"])


def head_slice(attention: dict[str, torch.Tensor], config: GPTConfig,
               head: int) -> dict[str, torch.Tensor]:
    """One head's query, key and value layers, cut out of an attention layer's `qkv`.

    `qkv` stacks the queries, keys and values of all heads, each C = n_embd rows,
    and within each the heads one after another, head_size rows each: the rows
    that head `head` reads its queries with are C*0 + head*head_size onwards.
    """
    size = config.n_embd // config.n_head
    n = config.n_embd
    cut = {}
    for i, name in enumerate(("query", "key", "value")):
        rows = slice(i * n + head * size, i * n + (head + 1) * size)
        cut[f"{name}.weight"] = attention["qkv.weight"][rows].clone()
        cut[f"{name}.bias"] = attention["qkv.bias"][rows].clone()
    return cut


def load_known_weights(module: torch.nn.Module, weights: dict[str, torch.Tensor],
                       class_name: str) -> None:
    """Copy `weights` into the module's parameters of the same names.

    The names must be exactly the parameters' names: a missing, extra or
    misnamed parameter, or a wrong shape, is a KnownWeightsError that lists
    what was expected and what was found (a ParameterNamesError for names,
    a KnownWeightsError for shapes). Buffers (a causal mask kept with
    register_buffer, say) are the learner's own and left alone.
    """
    found = dict(module.named_parameters())
    missing = [k for k in weights if k not in found]
    extra = [k for k in found if k not in weights]
    if missing or extra:
        biases = _lone_biases(extra, weights)
        left_off = _lone_biases(missing, found)
        lines = [tr("{name}'s parameters do not have the names the statement fixes, "
                    "so the grader cannot load its known weights into them:", name=class_name)]
        alone = bool(biases) and not missing and len(biases) == len(extra)
        alone_off = bool(left_off) and not extra and len(left_off) == len(missing)
        if alone:
            lines = [tr("{name} has biases left on, where the statement's layers have "
                        "none, so the grader cannot load its known weights into it:",
                        name=class_name)]
        elif alone_off:
            lines = [tr("{name} has biases left off, where the statement's layers have "
                        "them, so the grader cannot load its known weights into it:",
                        name=class_name)]
        if len(weights) <= SHOWN_NAMES:  # a short list reads best whole
            lines += ["  " + tr("expected: {names}", names=", ".join(weights)),
                      "  " + tr("found:    {names}",
                                names=", ".join(found) or tr("no parameters at all"))]
        else:
            lines.append("  " + tr("expected {expected} parameters, found {found}",
                                   expected=len(weights), found=len(found)))
        if missing:
            lines.append("  " + tr("missing:  {names}", names=names(missing)))
        if extra:
            lines.append("  " + tr("not expected: {names}", names=names(extra)))
        lines += (_tied(module, missing) + _unregistered(module, missing, found)
                  + _said_of_biases(biases, alone, True, module)
                  + _said_of_biases(left_off, alone_off, False, module))
        raise ParameterNamesError("\n".join(lines))
    for name, value in weights.items():
        if tuple(found[name].shape) != tuple(value.shape):
            raise KnownWeightsError(tr(
                "{owner}'s parameter {name} has shape {shape}, expected {expected}",
                owner=class_name, name=name, shape=tuple(found[name].shape),
                expected=tuple(value.shape)))
    with torch.no_grad():
        for name, value in weights.items():
            found[name].copy_(value)


def _lone_biases(candidates: list[str], layers: Collection[str]) -> list[str]:
    """The names among `candidates` that are the biases of layers whose weights are in
    `layers`: found but not expected where the expected weights stand without one
    (nn.Linear's bias=True, its default, left on), or expected but not found where the
    found layers have none (nn.Linear(..., bias=False) where the statement's layer keeps
    the default: a head written as in the well-known lecture, whose layers have none)."""
    return [name for name in candidates if name.endswith(".bias")
            and f"{name.removesuffix('.bias')}.weight" in layers]


# The fix of biases left on (True) and left off (False): when they are the names' only
# trouble (one layer, several), then one bias and several among other names' troubles.
# {call} builds the layer, of the learner's own kind: nn.Linear(..., bias=False) where
# the bias is left on, nn.Linear(in, out) where it is left off.
_BIAS_FIXES = {
    True: (marked("build {names} with {call}"),
           marked("build {names} with {call}"),
           marked("{names} has a bias left on: build it with {call}"),
           marked("{names} have biases left on: build them with {call}")),
    False: (marked("build {names} with its bias: {call}, without bias=False"),
            marked("build {names} with their biases: {call}, without bias=False"),
            marked("{names} has no bias: build it with {call}, without bias=False"),
            marked("{names} have no biases: build them with {call}, without bias=False")),
}


def _said_of_biases(biases: list[str], alone: bool, left_on: bool,
                    module: torch.nn.Module) -> list[str]:
    """The fix of biases left on or off; what they are too, among other names' troubles."""
    if not biases:
        return []
    fix = _BIAS_FIXES[left_on][(0 if len(biases) == 1 else 1) if alone
                               else 2 if len(biases) == 1 else 3]
    layers = [name.removesuffix(".bias") for name in biases]
    call = _layer_call(module, layers, without_bias=left_on)
    return ["  " + translated(fix).format(names=names(layers), call=call)]


def _layer_call(module: torch.nn.Module, layers: list[str], without_bias: bool) -> str:
    """How the layers are built, by their kind: a LayerNorm built with bias=False was
    told to build it with nn.Linear."""
    kinds = set()
    for layer in layers:
        try:
            kinds.add(type(module.get_submodule(layer)).__name__)
        except AttributeError:
            kinds.add("Linear")
    kind = kinds.pop() if len(kinds) == 1 else "Linear"
    if without_bias:
        return f"nn.{kind}(..., bias=False)"
    return "nn.Linear(in, out)" if kind == "Linear" else f"nn.{kind}(...)"


def _tied(module: torch.nn.Module, missing: list[str]) -> list[str]:
    """Why a missing name may be there after all: one tensor under two names.

    named_parameters() lists a shared tensor once, under its first name, so tying
    the head to the token embedding (as GPT-2 does) hides `head.weight`, and a
    list of one block repeated, `[Block(config)] * n`, hides every block but the
    first: that is said once for the block, not once for each of its tensors.
    """
    first_module: dict[int, str] = {}
    copies: dict[str, list[str]] = {}  # a module's first name -> its other names
    for name, sub in module.named_modules(remove_duplicate=False):
        if not name or any(name.startswith(f"{c}.") for cs in copies.values() for c in cs):
            continue
        original = first_module.setdefault(id(sub), name)
        if original != name:
            copies.setdefault(original, []).append(name)
    said = []
    for original, again in copies.items():
        if any(m.startswith(f"{c}.") for c in again for m in missing):
            kind = type(module.get_submodule(original)).__name__
            fields = dict(names=_joined(again), kind=kind, original=original)
            said.append("  " + (tr(
                "{names} is the same {kind} as {original} (a list such as [{kind}(config)] "
                "* n holds one module n times): build each anew, as in "
                "nn.ModuleList({kind}(config) for _ in range(n))", **fields)
                if len(again) == 1 else tr(
                "{names} are the same {kind} as {original} (a list such as "
                "[{kind}(config)] * n holds one module n times): build each anew, as in "
                "nn.ModuleList({kind}(config) for _ in range(n))", **fields)))
    hidden = [c for cs in copies.values() for c in cs]
    first: dict[int, str] = {}
    for name, tensor in module.named_parameters(remove_duplicate=False):
        first.setdefault(id(tensor), name)
        if (name in missing and first[id(tensor)] != name
                and not any(name.startswith(f"{c}.") for c in hidden)):
            said.append("  " + tr("{name} is the same tensor as {first} (tied weights); "
                                  "the shipped model keeps them apart: give each its own",
                                  name=name, first=first[id(tensor)]))
    return said


def _unregistered(module: torch.nn.Module, missing: list[str],
                  found: dict[str, torch.Tensor]) -> list[str]:
    """Why the parameters of a part are missing: modules kept in a plain Python list
    or tuple are not registered, so the module never sees their parameters."""
    said = []
    for part in dict.fromkeys(name.split(".")[0] for name in missing):
        held = getattr(module, part, None)
        if (isinstance(held, (list, tuple)) and not any(n.startswith(f"{part}.") for n in found)
                and any(isinstance(m, torch.nn.Module) for m in held)):
            said.append("  " + tr("self.{part} is a Python {kind}, so the modules in it are "
                                  "not registered and their parameters are not {owner}'s: "
                                  "use nn.ModuleList(...)", part=part,
                                  kind=type(held).__name__, owner=type(module).__name__))
    return said


def _joined(listed: list[str]) -> str:
    """Names said as one list: "a", "a and b", "a, b and c"."""
    if len(listed) == 1:
        return listed[0]
    return tr("{names} and {last}", names=", ".join(listed[:-1]), last=listed[-1])


def names(listed: list[str]) -> str:
    """Parameter names for a message: all of a few, the first of many."""
    if len(listed) <= SHOWN_NAMES:
        return ", ".join(listed)
    return tr("{names} and {n} more", names=", ".join(listed[:SHOWN_NAMES]),
              n=len(listed) - SHOWN_NAMES)


def run_module(cls: type, config: dict[str, int], spec: dict[str, Any], *inputs: Any) -> Any:
    """Build `cls(config)`, load the weights `spec` describes, and call it on `inputs`.

    The one way every module is run, the learner's in the worker and the
    reference and the known mistakes in the grader, so all three are treated
    alike: evaluation mode (no dropout), no gradients.
    """
    made = build_loaded(cls, config, spec)
    with torch.no_grad():
        return made(*inputs)


def build_loaded(cls: type, config: dict[str, int], spec: dict[str, Any]) -> torch.nn.Module:
    """`cls(config)` with the weights `spec` describes, in evaluation mode.

    Also how `talk --yours` builds the learner's GPT with the shipped weights,
    so that talking refuses a module for the same reasons grading does.
    """
    made = cls(config_from(config))
    if not isinstance(made, torch.nn.Module):
        raise ParameterNamesError(tr("{name} is not a torch.nn.Module: write class "
                                     "{name}(nn.Module) and call super().__init__() first",
                                     name=cls.__name__))
    load_known_weights(made, state_dict(spec), cls.__name__)
    return made.eval()


class ModuleDriver:
    """A module class seen as a Solution: `forward(config, weights, *inputs)` builds
    it from the config, loads the known weights and runs it.

    The worker drives a learner's class through it, and the grader the
    reference's, so a module problem is graded by the same contract as any other.
    """

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def forward(self, config: dict[str, int], weights: dict[str, Any], *inputs: Any) -> Any:
        return run_module(self.cls, config, weights, *inputs)
