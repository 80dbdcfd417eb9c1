"""What the checks of the model's modules share (attention-head,
multi-head-attention, transformer-block, gpt).

Each of them loads the learner's module with known weights and calls it: the
shipped model's own layers on the activations they really see, then small
random models. The fixed cases, the drawn examples, the judging of a module's
output and the attention's known mistakes are the same logic for all of them,
written once here; a check module names only its part of the model and what is
new about its problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import comparing, expect_activations, expect_type
from grader.grading.subject.cases import SHIPPED, context_length, corpus_prefix, random_input
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import shared
from grader.grading.subject.strategies import random_models, token_contexts
from grader.grading.values.equality import same_activations
from grader.grading.values.failures import Diagnosis, GradeFailure, Mistake, gave_two_outputs
from grader.locale import marked, tr
from grader.model import artifacts
from grader.model.parts import weights
from grader.model.spec import ModelSpec

# A config small enough to read, for the fixed case with random weights.
SMALL = {"vocab_size": 6, "context_length": 8, "n_layer": 1, "n_head": 2, "n_embd": 8}
SMALL_RANDOM = ModelSpec("random", SMALL, 7)

MASK = "query t may see keys 0 to t: mask the scores where torch.tril(torch.ones(T, T)) is 0"


def qkv_order_mistake(made: Callable[..., torch.Tensor]) -> Mistake:
    """Splitting qkv's output into q, k and v in another order, made by `made`
    with the `order` knob (grader/grading/subject/transformer.py's layer)."""
    (mistake,) = shared("qkv-order", made)
    return mistake


def shipped_config() -> dict[str, int]:
    return artifacts.load_config().to_dict()


@dataclass(frozen=True)
class LayerChecks:
    """The fixed cases and drawn examples (config, weights, x) of a part of a
    block, and the Contract fields that grade its output.

    `part` is the part's path with `{}` for the block's index ("blocks.{}.attn");
    `input_at(prompt, layer)` is what that part of block `layer` receives;
    `last` names the case of the last block; `output` is what the answer is
    called in a failure. With `one_head` the weights are those of one head, a
    different one in most cases.
    """

    part: str
    input_at: Callable[[str, int], torch.Tensor]
    last: str
    output: str
    one_head: bool = False
    one_token_layer: int = 0

    def checks(self, mistakes: Sequence[Mistake], shipped: str, drawn: str) -> ModuleTests:
        """The part's contract and its three tests (see module_tests)."""
        return module_tests(self.cases, mistakes, self.draw, output=self.output,
                            shipped=shipped, drawn=drawn)

    def weights(self, model: ModelSpec, layer: int, head: int | None) -> dict[str, Any]:
        return weights(model, self.part.format(layer), head if self.one_head else None)

    def cases(self) -> dict[str, tuple]:
        config, input_at = shipped_config(), self.input_at

        def case(layer: int, head: int, prompt: str) -> tuple:
            return config, self.weights(SHIPPED, layer, head), input_at(prompt, layer)

        return {
            "a-sentence": case(0, 0, "Once upon a time, there was a"),
            self.last: case(2, 3, "Tom and his dog ran"),
            "one-token": case(self.one_token_layer, 1, "\n"),
            "full-window": case(1, 2, corpus_prefix(context_length())),
            "batch-of-two": (config, self.weights(SHIPPED, 0, 0),
                             torch.cat([input_at("The cat", 0), input_at("Tom ran", 0)])),
            "random-weights": (SMALL, self.weights(SMALL_RANDOM, 0, 1),
                               random_input((2, 8, 8), seed=1)),
        }

    def draw(self, data: st.DataObject) -> tuple:
        """The part of a random GPT's first block (one random head of it, with
        `one_head`), with random weights, on random activations."""
        spec = data.draw(random_models(), label="model")
        config = spec.config
        head = (data.draw(st.integers(0, config["n_head"] - 1), label="head")
                if self.one_head else None)
        batch = data.draw(st.integers(1, 2), label="B")
        length = data.draw(st.integers(1, config["context_length"]), label="T")
        seed = data.draw(st.integers(0, 2**16), label="seed of x")
        return (dict(config), self.weights(spec, 0, head),
                random_input((batch, length, config["n_embd"]), seed))


# A module's contract, then its two tests: its fixed cases (on the shipped model's
# activations mostly, a small random layer among them) and its drawn examples.
ActivationTests = tuple[Contract, Callable[..., None], Callable[..., None]]
# The same, then the test of the same output twice.
ModuleTests = tuple[Contract, Callable[..., None], Callable[..., None], Callable[[Kata], None]]


def activation_tests(cases: Callable[[], dict[str, tuple]], mistakes: Sequence[Mistake],
                     draw: Callable[[st.DataObject], tuple], *, output: str, shipped: str,
                     drawn: str, **fields: Any) -> ActivationTests:
    """The contract of a module whose output is activations (`output` names it in a
    failure): compared, and matched with a mistake or a golden, within a tolerance of
    the tensor's scale; `fields` are its other Contract fields. Then its two tests: the
    fixed `cases` (described by `shipped`) and examples drawn by `draw` (by `drawn`)."""
    contract = Contract(cases=cases, mistakes=list(mistakes), matches=same_activations,
                        same_as_golden=same_activations,
                        judge=comparing(expect_activations, output), **fields)
    return (contract, *contract.tests(shipped, drawn, draw))


def module_tests(cases: Callable[[], dict[str, tuple]], mistakes: Sequence[Mistake],
                 draw: Callable[[st.DataObject], tuple], *, output: str, shipped: str,
                 drawn: str) -> ModuleTests:
    """activation_tests' contract and tests for a module of the model, which may hold a
    dropout or something sized for the whole window (unnamed_module_hint says so), and
    a third test: the same output twice."""
    contract, shipped_test, drawn_test = activation_tests(
        cases, mistakes, draw, output=output, shipped=shipped, drawn=drawn,
        fallback_hint=unnamed_module_hint)
    return contract, shipped_test, drawn_test, repeatable(contract)


def unnamed_module_hint(call: Call) -> Diagnosis | str:
    """What a module's failure that names no known mistake can still show: something
    sized for the whole window, an output that changes from call to call, or a .view()
    of a transposed tensor."""
    return uncut_mask(call) or dropout_left_active(call) or view_of_a_transpose(call)


def view_of_a_transpose(call: Call) -> str:
    """A note on torch's refusal to .view() a tensor whose memory is not in its order
    (one .transpose() made): torch's own advice, .reshape(), is right only where the
    transpose stays; dropping the transpose instead runs, and joins the wrong values."""
    if call.outcome[0] != "error" or "view size is not compatible" not in str(call.outcome[1]):
        return ""
    return "\n" + tr("A tensor made by .transpose() keeps its memory in the old order, which "
                     ".view() cannot merge: .contiguous().view(...) or .reshape(...) merges "
                     "it in the transposed order. Leaving the transpose out instead would "
                     "run, but join the wrong values.")


def dropout_left_active(call: Call) -> Diagnosis | str:
    """A note on a wrong output that the same call, made again, does not repeat: a
    dropout left active. The check of the same output twice says so too, but it comes
    last among the module's checks, below the wrong outputs the terminal shows first;
    here each of those says it, with the evidence of its own case."""
    first = call.outcome[1] if call.outcome[0] == "value" else None
    if not isinstance(first, torch.Tensor) or call.again is None:
        return ""
    try:
        second = call.again(*call.args)
    except GradeFailure:
        return ""  # the second call went wrong: the other checks report that
    again = second[1] if second[0] == "value" else None
    if not (isinstance(again, torch.Tensor) and again.shape == first.shape):
        return ""
    both_nan = first.isnan() & again.isnan() if first.is_floating_point() else False
    if bool(((first == again) | both_nan).all()):
        return ""
    return Diagnosis.of("\n" + tr("Called again with the same weights and input, your module "
                                  "gave another output: is a dropout left active?"),
                        hint=tr("the grader calls it in evaluation mode (module.eval()), "
                                "where nn.Dropout does nothing, but F.dropout(x, p) drops "
                                "unless given training=self.training: use nn.Dropout, or "
                                "leave dropout out"))


def uncut_mask(call: Call) -> str:
    """A note on an error of shapes where the module used something sized for the
    whole window (a mask buffer, the positions, of context_length) on an input of fewer
    positions."""
    message = str(call.outcome[1]) if call.outcome[0] == "error" else ""
    config, inputs = call.named.get("config"), [a for a in call.args
                                                 if isinstance(a, torch.Tensor)]
    if not (message and isinstance(config, dict) and inputs and inputs[-1].dim() >= 2):
        return ""
    window, positions = config.get("context_length"), inputs[-1].shape[1]
    if window == positions or not re.search(rf"\b{window}\b", message) or not re.search(
            rf"\b{positions}\b", message):
        return ""
    # "of length T", not "of T positions": T is 1 in the one-token case.
    return "\n" + tr("Something sized for the whole window (context_length = {window}) met "
                     "an input of length {positions}: cut it to the input's length, as the "
                     "window may be longer than the text (a mask self.tril[:T, :T], the "
                     "positions torch.arange(T)).", window=window, positions=positions)


def drawn_contexts(data: st.DataObject, config: dict[str, Any]) -> torch.Tensor:
    """One row of random token ids that fits the model's window, or two of one length."""
    rows = [data.draw(token_contexts(config["vocab_size"], max_length=config["context_length"]),
                      label="context")]
    if data.draw(st.booleans(), label="a second row"):
        length = rows[0].shape[1]
        rows.append(data.draw(token_contexts(config["vocab_size"], length, length),
                              label="second row"))
    return torch.cat(rows)


def attention_mistakes(attention: Callable[..., torch.Tensor], *, by_size: str, by_embd: str,
                       by_time: str, softmax: tuple[str, str], own: Sequence[Mistake] = (),
                       layouts: Sequence[dict[str, Any]] = ({},)) -> list[Mistake]:
    """The known mistakes of causal attention, made by `attention` with one knob
    changed (grader/grading/subject/transformer.py), in the order they are looked for.

    The hints of the scaling and of the softmax speak of the problem's own
    shapes, so the problem gives them: `by_size`, `by_embd` and `by_time` for dividing
    by head_size, by sqrt(n_embd) and by sqrt(T), `softmax` the (name, hint) of the wrong
    dimension. `own` are the problem's other mistakes, looked for before
    masking after the softmax. `layouts` are the knobs of each way a learner lays out
    the heads whose k.T raises an error of its own (the heads at once, or a loop over
    3-d slices of the channels).
    """
    def knob(**changed: Any) -> Callable[..., torch.Tensor]:
        return partial(attention, **changed)

    return [
        Mistake("leave out the causal mask",
                "set the scores of later positions to -inf before the softmax; " + MASK,
                knob(diagonal=None)),
        Mistake("put the mask's diagonal one off",
                "each position sees itself too, and nothing after it; " + MASK,
                knob(diagonal=1), knob(diagonal=-1)),
        Mistake("mask the scores with 0 instead of -inf (or multiply them by the triangle)",
                "a score of 0 still weighs exp(0) = 1 in the softmax: fill the later "
                "positions with float('-inf'); " + MASK,
                knob(fill=0.0)),
        Mistake("mask the earlier positions instead of the later ones (triu for tril)",
                "each position sees itself and the positions before it: keep the lower "
                "triangle, torch.tril; " + MASK,
                knob(triangle="upper")),
        Mistake("divide the scores by head_size instead of its square root", by_size,
                knob(scale="size")),
        Mistake("divide the scores by the square root of n_embd instead of head_size", by_embd,
                knob(scale="embd")),
        Mistake("leave the scores unscaled",
                "divide q @ k.transpose(-2, -1) by sqrt(head_size) before the softmax",
                knob(scale="none")),
        Mistake("multiply the scores by the square root of head_size instead of dividing",
                "scale by 1 / sqrt(head_size): q @ k.transpose(-2, -1) / math.sqrt(head_size), "
                "or * head_size ** -0.5, whose exponent is negative",
                knob(scale="times-sqrt")),
        Mistake("divide the scores by the square root of T instead of head_size", by_time,
                knob(scale="time")),
        # k.T reverses every dimension of a (B, T, head_size) k (PyTorch only warns that
        # it is deprecated there): q @ k.T then mostly raises, and where the shapes happen
        # to broadcast it mixes batches. Either way its outcome is the learner's, in the
        # layout of the learner's heads.
        Mistake("transpose k with k.T",
                "on a tensor of more than two dimensions k.T reverses every dimension, the "
                "batch's too (PyTorch warns that this is deprecated): swap only the last "
                "two, k.transpose(-2, -1) (or k.mT)",
                *(knob(keys="all", **layout) for layout in layouts)),
        Mistake(*softmax, knob(softmax_dim=-2), knob(softmax_dim=1)),
        *own,
        Mistake("mask after the softmax",
                "mask the scores with -inf before the softmax, so that each row of weights "
                "still adds up to 1",
                knob(mask_after_softmax=True)),
    ]


def repeatable(contract: Contract, case: str = "a-sentence") -> Callable[[Kata], None]:
    """A check that the module gives the same output twice on the same weights and
    input: in evaluation mode nothing in it is random, so an output that changes
    is a dropout left active (F.dropout's training=True is its default)."""
    def test_the_same_output_twice(kata: Kata) -> None:
        """The same weights and input give the same output twice (no dropout in evaluation mode)"""
        args = contract.cases()[case]
        # A module that raises, or gives no tensor, gives no output to compare: it
        # fails here too, where it passed and scored a point for never answering.
        a, b = (kata.run(contract.method, *args, arg_names=contract.arg_names)
                for _ in range(2))
        for got in (a, b):
            expect_type(got, torch.Tensor, marked("the module's output"))
        if a.shape == b.shape and not torch.equal(a, b):
            raise GradeFailure(gave_two_outputs(case))

    # The learners' copy runs the same check on the same case (release/build.py).
    test_the_same_output_twice.case = case  # type: ignore[attr-defined]
    return test_the_same_output_twice
