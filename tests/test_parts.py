"""The model-part problems: known weights load by name, and the references are the shipped model.

The problems attention-head, multi-head-attention, transformer-block and gpt
grade a learner's module by loading known weights into it (grader/model/parts.py).
These tests hold that machinery to the shipped model itself, computed by
grader/model/gpt.py, which none of it uses.
"""

from __future__ import annotations

import re

import pytest
import torch
from misfits import NoBiases, TwoLayers, misfits
from torch import nn

from grader.grading.judging.any_result import expect_activations
from grader.grading.subject import transformer
from grader.grading.subject.cases import SHIPPED, attention_input, block_input, prompt_ids
from grader.grading.subject.reference import load_reference
from grader.grading.values.failures import GradeFailure
from grader.model import artifacts, parts
from grader.model.gpt import GPTConfig
from grader.model.spec import ModelSpec
from grader.registry import find

CONFIG = artifacts.load_config()
SMALL = {"vocab_size": 6, "context_length": 8, "n_layer": 2, "n_head": 2, "n_embd": 8}


def reference(slug: str) -> type:
    return load_reference(find(slug)).cls


def run(slug: str, spec: dict, *inputs: torch.Tensor) -> torch.Tensor:
    return parts.run_module(reference(slug), CONFIG.to_dict(), spec, *inputs)


@torch.no_grad()
def shipped_heads(layer: int, x: torch.Tensor) -> torch.Tensor:
    """The shipped attention's heads side by side, before its projection: (B, T, n_embd)."""
    attn = artifacts.shipped_model().blocks[layer].attn
    seen = []
    hook = attn.proj.register_forward_hook(lambda module, args, out: seen.append(args[0]))
    try:
        attn(x)
    finally:
        hook.remove()
    return seen[0]


@pytest.mark.parametrize("layer", [0, 2])
def test_a_head_sliced_from_the_shipped_attention_is_that_head(layer: int) -> None:
    x = attention_input("Once upon a time, there was a", layer)
    heads = shipped_heads(layer, x)
    size = CONFIG.n_embd // CONFIG.n_head
    for head in range(CONFIG.n_head):
        got = run("attention-head", parts.weights(SHIPPED, f"blocks.{layer}.attn", head), x)
        torch.testing.assert_close(got, heads[..., head * size:(head + 1) * size])


@torch.no_grad()
def test_the_references_with_the_shipped_weights_are_the_shipped_model() -> None:
    model = artifacts.shipped_model()
    x = attention_input("Tom and his dog ran", 1)
    torch.testing.assert_close(run("multi-head-attention", parts.weights(SHIPPED, "blocks.1.attn"),
                                   x), model.blocks[1].attn(x)[0])
    x = block_input("Tom and his dog ran", 2)
    torch.testing.assert_close(run("transformer-block", parts.weights(SHIPPED, "blocks.2"), x),
                               model.blocks[2](x)[0])
    ids = torch.cat([prompt_ids("The cat"), prompt_ids("Tom ran")])
    torch.testing.assert_close(run("gpt", parts.weights(SHIPPED), ids), model(ids))


@torch.no_grad()
def test_the_mistakes_without_their_knobs_are_the_shipped_model() -> None:
    """Each mistake is the right computation with one knob turned; untouched, it is right."""
    model, config = artifacts.shipped_model(), CONFIG.to_dict()
    x = attention_input("The cat sat", 0)
    torch.testing.assert_close(
        transformer.attention(config, parts.weights(SHIPPED, "blocks.0.attn"), x),
        model.blocks[0].attn(x)[0])
    torch.testing.assert_close(
        transformer.head(config, parts.weights(SHIPPED, "blocks.0.attn", 1), x),
        run("attention-head", parts.weights(SHIPPED, "blocks.0.attn", 1), x))
    x = block_input("The cat sat", 1)
    torch.testing.assert_close(transformer.block(config, parts.weights(SHIPPED, "blocks.1"), x),
                               model.blocks[1](x)[0])
    ids = prompt_ids("Once upon a time")
    torch.testing.assert_close(transformer.gpt(config, parts.weights(SHIPPED), ids), model(ids))


def test_random_weights_are_reproducible_and_leave_the_global_generator_alone() -> None:
    state = torch.random.get_rng_state()
    spec = parts.weights(ModelSpec("random", SMALL, 3), "blocks.1")
    first, again = parts.state_dict(spec), parts.state_dict(spec)
    other = parts.state_dict(parts.weights(ModelSpec("random", SMALL, 4), "blocks.1"))
    assert torch.equal(torch.random.get_rng_state(), state)
    assert list(first) == list(reference("transformer-block")(
        GPTConfig(**SMALL)).state_dict())
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not torch.equal(first["attn.qkv.weight"], other["attn.qkv.weight"])


def test_the_shipped_weights_are_copies() -> None:
    """A module loaded with them cannot change the model the worker keeps."""
    weights = parts.state_dict(parts.weights(SHIPPED, "blocks.0.attn"))
    weights["qkv.weight"].zero_()
    assert artifacts.shipped_model().blocks[0].attn.qkv.weight.abs().sum() > 0


class Misnamed(nn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        size = config.n_embd // config.n_head
        self.query = nn.Linear(config.n_embd, size)
        self.k = nn.Linear(config.n_embd, size)
        self.value = nn.Linear(config.n_embd, size)


def test_wrong_names_are_listed_expected_against_found() -> None:
    spec = parts.weights(SHIPPED, "blocks.0.attn", 0)
    with pytest.raises(parts.ParameterNamesError) as raised:
        parts.run_module(Misnamed, CONFIG.to_dict(), spec, attention_input("The"))
    message = str(raised.value)
    assert "expected: query.weight, query.bias, key.weight, key.bias, value.weight" in message
    assert "found:    query.weight, query.bias, k.weight, k.bias, value.weight" in message
    assert "missing:  key.weight, key.bias" in message
    assert "not expected: k.weight, k.bias" in message


def test_biases_left_on_are_named_with_their_fix() -> None:
    """Layers the statement fixes without a bias are built with one: the message says
    so, and how to leave them out, rather than only that the names differ."""
    weights = {"up.weight": torch.zeros(3, 2), "down.weight": torch.zeros(2, 3)}
    with pytest.raises(parts.ParameterNamesError) as raised:
        parts.load_known_weights(TwoLayers(), weights, "Layer")
    message = str(raised.value)
    assert message.startswith("Layer has biases left on")
    assert "do not have the names" not in message
    assert "  build up, down with nn.Linear(..., bias=False)" in message.splitlines()
    # Among other names' troubles the biases are still said, as one trouble of several.
    with pytest.raises(parts.ParameterNamesError) as raised:
        parts.load_known_weights(TwoLayers(misnamed=True), weights, "Layer")
    message = str(raised.value)
    assert "do not have the names the statement fixes" in message
    assert "  missing:  down.weight" in message
    assert "  up has a bias left on: build it with nn.Linear(..., bias=False)" in message


def test_biases_left_off_are_named_with_their_fix() -> None:
    """Layers the statement fixes with a bias are built without: the message says so,
    and how to keep them, rather than only that the names differ."""
    weights = {"up.weight": torch.zeros(3, 2), "up.bias": torch.zeros(3),
               "down.weight": torch.zeros(2, 3), "down.bias": torch.zeros(2)}
    with pytest.raises(parts.ParameterNamesError) as raised:
        parts.load_known_weights(NoBiases(), weights, "Layer")
    message = str(raised.value)
    assert message.startswith("Layer has biases left off")
    assert "do not have the names" not in message
    assert "  missing:  up.bias, down.bias" in message.splitlines()
    assert ("  build up, down with their biases: nn.Linear(in, out), without bias=False"
            in message.splitlines())
    with pytest.raises(parts.ParameterNamesError) as raised:
        parts.load_known_weights(NoBiases(misnamed=True), weights, "Layer")
    message = str(raised.value)
    assert "do not have the names the statement fixes" in message
    assert "  up has no bias: build it with nn.Linear(in, out), without bias=False" in message


class Hardcoded(nn.Module):
    """Sizes of the shipped model written in, and a mask buffer of its own."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.query, self.key, self.value = (nn.Linear(64, 16) for _ in range(3))
        self.register_buffer("tril", torch.tril(torch.ones(48, 48)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.value(x)


def test_a_wrong_shape_names_the_parameter_and_buffers_are_the_learners() -> None:
    x = attention_input("The")
    shipped = parts.weights(SHIPPED, "blocks.0.attn", 0)
    out = parts.run_module(Hardcoded, CONFIG.to_dict(), shipped, x)
    assert out.shape == (1, 3, 16)  # loaded, although its state dict also holds `tril`
    small = parts.weights(ModelSpec("random", SMALL, 0), "blocks.0.attn", 0)
    with pytest.raises(parts.KnownWeightsError, match=r"query.weight has shape \(16, 64\), "
                                                      r"expected \(4, 8\)"):
        parts.run_module(Hardcoded, SMALL, small, torch.zeros(1, 2, 8))


def test_not_a_module_is_said_plainly() -> None:
    class Plain:
        def __init__(self, config: object) -> None:
            pass

    with pytest.raises(parts.ParameterNamesError, match="is not a torch.nn.Module"):
        parts.run_module(Plain, SMALL, parts.weights(ModelSpec("random", SMALL, 0)),
                         torch.zeros(1, 1, dtype=torch.long))


def misfit_messages() -> dict[str, str]:
    """What loading known weights says of each way a module's parameters can misfit."""
    said = {}
    for name, (module, weights) in misfits().items():
        with pytest.raises(parts.KnownWeightsError) as raised:
            parts.load_known_weights(module, weights, "Layer")
        said[name] = str(raised.value)

    class Plain:
        def __init__(self, config: object) -> None:
            pass

    with pytest.raises(parts.ParameterNamesError) as raised:
        parts.build_loaded(Plain, SMALL, parts.weights(ModelSpec("random", SMALL, 0)))
    said["not-a-module"] = str(raised.value)
    return said


# The kata's own words in the messages above, none of them a parameter's or code's.
ENGLISH_WORDS = ("expected", "found", "missing", "the ", "build", "grader", " more",
                 " and ", "same", "registered", "left o", "has ", "have ", "is not",
                 "without", "parameters", "shape")


def test_every_misfit_is_said_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under --lang zh each line the loader writes is Chinese around the names and the
    code it quotes; in English the same cases read as the English tests above."""
    english = misfit_messages()
    assert "blocks.1 and blocks.2 are the same Linear as blocks.0" in english["one-block-thrice"]
    assert "w0, w1" in english["many-names"] and "and 18 more" in english["many-names"]
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    chinese = misfit_messages()
    assert "blocks.1 和 blocks.2 与 blocks.0 是同一个 Linear" in chinese["one-block-thrice"]
    assert "另外 18 个" in chinese["many-names"]
    assert "一个参数也没有" in chinese["no-parameters"]
    for name, message in chinese.items():
        for line in message.splitlines():
            assert re.search(r"[\u4e00-\u9fff]", line), (name, line)
            assert not [w for w in ENGLISH_WORDS if w in line], (name, line)
        # The names and the code a learner needs stay as they are.
        assert set(re.findall(r"nn\.\w+\([^)]*\)", english[name])) == set(
            re.findall(r"nn\.\w+\([^)]*\)", message)), name


@torch.no_grad()
def test_module_outputs_are_judged_at_their_own_scale() -> None:
    """The same logits computed in float64 pass; a named mistake fails by far."""
    model, ids = artifacts.shipped_model(), prompt_ids("Once upon a time, there was a")
    expected = model(ids)
    wide = reference("gpt")(CONFIG).double()
    wide.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    expect_activations(wide.eval()(ids).float(), expected, "the logits tensor")
    wrong = transformer.gpt(CONFIG.to_dict(), parts.weights(SHIPPED), ids, positions=False)
    with pytest.raises(GradeFailure, match="the logits tensor is off by"):
        expect_activations(wrong, expected, "the logits tensor")


def test_the_worker_builds_a_module_only_for_a_module_problem() -> None:
    from grader.sandbox.worker.serve import WorkerLoop

    solution, module = find("loss"), find("attention-head")
    plain = WorkerLoop()
    assert plain.load(str(solution.reference), "Solution", ["loss"]) == {"ok": True}
    assert type(plain.solution).__name__ == "Solution"
    built = WorkerLoop()
    assert built.load(str(module.reference), "Head", ["forward"], nn_module=True) == {"ok": True}
    assert isinstance(built.solution, parts.ModuleDriver)
    assert built.solution.cls.__name__ == "Head"
