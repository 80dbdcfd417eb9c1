"""Checks for problem 25, train-step: zero the gradients, forward, loss, backward, step.

A training step changes its model, so it cannot be handed the worker's shared,
frozen models. Each check runs `harness:train_steps` (grader/sandbox/worker/harnesses.py):
a GPT and an AdamW built afresh from a seed, in the worker for the submission and
here for the reference, then `train_step()` once per batch. The losses each step
returned and the weights after the last one are compared with the reference's.

The weights after several optimizer steps move with float rounding from one
machine to another more than any fixed golden can allow for, so every case is
judged against the live reference (goldens=False).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache, partial
from types import SimpleNamespace
from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.subject.cases import prompt_ids
from grader.grading.subject.kata import Call
from grader.grading.values.equality import Outcome
from grader.grading.values.failures import GradeFailure, Mistake
from grader.grading.values.tolerances import ATOL, RTOL, TRAINED_WEIGHTS_ATOL
from grader.locale import tr
from grader.model import artifacts
from grader.sandbox.worker import harnesses
from grader.wording import a_kind

SMALL = {"vocab_size": 40, "context_length": 8, "n_layer": 1, "n_head": 2, "n_embd": 16}
DEEPER = {"vocab_size": 40, "context_length": 16, "n_layer": 2, "n_head": 4, "n_embd": 32}


@cache
def corpus() -> torch.Tensor:
    """The whole shipped corpus, encoded: what problem 19's batches are cut from."""
    return prompt_ids(artifacts.corpus_text())[0]


def corpus_batches(steps: int, batch_size: int, context_length: int,
                   seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """`steps` batches as problem 19's get_batch draws them, one generator for all:
    two (steps, batch_size, context_length) tensors."""
    data, generator = corpus(), torch.Generator().manual_seed(seed)
    xs, ys = zip(*(get_batch(data, context_length, batch_size, generator)
                   for _ in range(steps)))
    return torch.stack(xs), torch.stack(ys)


def get_batch(data: torch.Tensor, context_length: int, batch_size: int,
              generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch of windows and their targets, as problem 19's get_batch draws it."""
    starts = torch.randint(len(data) - context_length, (batch_size,), generator=generator)
    x = torch.stack([data[s:s + context_length] for s in starts.tolist()])
    y = torch.stack([data[s + 1:s + context_length + 1] for s in starts.tolist()])
    return x, y


def training(config: dict[str, int], seed: int, lr: float, weight_decay: float,
             xs: torch.Tensor, ys: torch.Tensor) -> tuple:
    """A case's four arguments: the model and the optimizer as the harness builds
    them, and the batches in order."""
    return ({"config": dict(config), "seed": seed},
            {"lr": lr, "weight_decay": weight_decay}, xs, ys)


def cases() -> dict[str, tuple]:
    x, y = corpus_batches(1, 4, 8, 0)
    return {
        "five-steps-on-the-corpus": training(SMALL, 0, 1e-2, 0.01, *corpus_batches(5, 4, 8, 0)),
        "one-step": training(SMALL, 0, 1e-2, 0.01, x, y),
        "the-same-batch-five-times": training(SMALL, 1, 1e-2, 0.01,
                                              x.repeat(5, 1, 1), y.repeat(5, 1, 1)),
        "a-deeper-model": training(DEEPER, 2, 1e-3, 0.1, *corpus_batches(5, 8, 16, 3)),
        "windows-shorter-than-the-context": training(DEEPER, 3, 3e-3, 0.0,
                                                     *corpus_batches(4, 2, 5, 4)),
    }


def draw_example(data: st.DataObject) -> tuple:
    n_head = data.draw(st.sampled_from([1, 2]), label="n_head")
    config = {
        "vocab_size": data.draw(st.integers(2, 12), label="vocab_size"),
        "context_length": data.draw(st.integers(1, 8), label="context_length"),
        "n_layer": data.draw(st.integers(1, 2), label="n_layer"),
        "n_head": n_head,
        "n_embd": n_head * data.draw(st.sampled_from([4, 8]), label="n_embd per head"),
    }
    seed = data.draw(st.integers(0, 2**16), label="seed of the weights")
    lr = data.draw(st.sampled_from([1e-3, 3e-3, 1e-2]), label="lr")
    weight_decay = data.draw(st.sampled_from([0.0, 0.01, 0.1]), label="weight_decay")
    steps = data.draw(st.integers(1, 4), label="steps")
    batch_size = data.draw(st.integers(1, 4), label="batch_size")
    length = data.draw(st.integers(1, config["context_length"]), label="T")
    shape = (steps, batch_size, length)
    ids = data.draw(st.lists(st.integers(0, config["vocab_size"] - 1),
                             min_size=2 * steps * batch_size * length,
                             max_size=2 * steps * batch_size * length), label="token ids")
    tokens = torch.tensor(ids, dtype=torch.long)
    xs, ys = tokens[:len(ids) // 2].view(shape), tokens[len(ids) // 2:].view(shape)
    return training(config, seed, lr, weight_decay, xs, ys)


# -- known mistakes: whole training steps, run through the same harness --------------------
def flat_loss(model: Any, x: torch.Tensor, y: torch.Tensor,
              reduction: str = "mean") -> torch.Tensor:
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1),
                           reduction=reduction)


def loss_against_inputs(model: Any, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Each position scored against its own input token, not the one after it."""
    return flat_loss(model, x, x)


def unflattened_loss(model: Any, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x), y)  # reads dimension 1, T, as the classes


def crossed_loss(model: Any, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The logits flattened time first, the targets row by row: wrong pairs."""
    logits = model(x)
    return F.cross_entropy(logits.transpose(0, 1).reshape(-1, logits.size(-1)), y.reshape(-1))


def shifted_loss(model: Any, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The targets shifted once more: position t scored against the token after next."""
    logits = model(x)[:, :-1]
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y[:, 1:].reshape(-1))


# train_step(model, optimizer, x, y) -> the loss, as a submission's would be called.
Step = Callable[[Any, Any, torch.Tensor, torch.Tensor], float]

RIGHT_ORDER = ("zero_grad", "loss", "backward", "step")


def step_doing(*actions: str, loss_of: Callable[..., torch.Tensor] = flat_loss) -> Step:
    """A training step that does `actions` in this order: "zero_grad", "loss" (the
    forward pass and `loss_of`), "backward", "clip" (clip_grad_norm_ to 1.0, as
    nanoGPT does) and "step"; it returns the loss. Most mistakes of the step are
    the right actions in a wrong order, or one left out or added."""
    def step(model: Any, optimizer: Any, x: torch.Tensor, y: torch.Tensor) -> float:
        loss = None
        for action in actions:
            if action == "loss":
                loss = loss_of(model, x, y)
            elif action == "backward":
                loss.backward()
            elif action == "clip":
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            else:
                getattr(optimizer, action)()
        return loss.item()
    return step


right_step = step_doing(*RIGHT_ORDER)


def new_optimizer(model, optimizer, x, y):
    settings = {k: optimizer.defaults[k] for k in ("lr", "weight_decay")}
    return right_step(model, torch.optim.AdamW(model.parameters(), **settings), x, y)


def loss_after_the_step(model, optimizer, x, y):
    right_step(model, optimizer, x, y)
    with torch.no_grad():
        return flat_loss(model, x, y).item()


def stepping(step: Step) -> Any:
    """A mistake's run: `step` as a submission's train_step, through the harness."""
    class Solution:
        def train_step(self, model, optimizer, x, y):
            return step(model, optimizer, x, y)

    module = SimpleNamespace(Solution=Solution)
    return lambda model, optimizer, x, y: harnesses.train_steps(module, model, optimizer, x, y)


# The training loop's check names the same mistake in its own loop, in the same words.
INPUTS_AS_TARGETS = "compute the loss against the inputs x instead of the targets y"
INPUTS_AS_TARGETS_FIX = ("the model reads x and predicts at each position the token after it, "
                         "which is y at that position: F.cross_entropy(logits.reshape(-1, "
                         "logits.size(-1)), y.reshape(-1))")

MISTAKES = [
    Mistake("never zero the gradients",
            "backward() adds to .grad, so without optimizer.zero_grad() each step follows "
            "the sum of every gradient so far; clear them before backward() every step",
            stepping(step_doing("loss", "backward", "step"))),
    Mistake("step the optimizer when it has no gradients to follow (before backward(), "
            "after zero_grad(), or not at all)",
            "the order is zero_grad(), forward, loss, backward(), step(): step() reads the "
            "gradients that backward() has just written",
            stepping(step_doing("zero_grad", "loss", "step", "backward")),
            stepping(step_doing("loss", "backward", "zero_grad", "step")),
            stepping(step_doing("zero_grad", "loss", "backward"))),
    Mistake("build a new optimizer inside train_step",
            "use the optimizer you are given: AdamW keeps running averages of every "
            "gradient from one step to the next, and a new one starts them from zero",
            stepping(new_optimizer)),
    Mistake("return the loss measured after the step",
            "return the loss of this step's forward pass, the one backward() ran on",
            stepping(loss_after_the_step)),
    Mistake("sum the loss over the positions instead of averaging it",
            "keep F.cross_entropy's default reduction='mean': the loss of one prediction "
            "on average, whatever the batch size",
            stepping(step_doing(*RIGHT_ORDER, loss_of=partial(flat_loss, reduction="sum")))),
    Mistake("compute the cross-entropy of the unflattened (B, T, vocab_size) logits",
            "F.cross_entropy reads dimension 1 as the classes: flatten the logits to "
            "(B*T, vocab_size) and the targets to (B*T,) first",
            stepping(step_doing(*RIGHT_ORDER, loss_of=unflattened_loss))),
    Mistake("flatten the logits and the targets in different orders",
            "flatten both row by row, so that each position meets its own target: "
            "logits.reshape(B * T, vocab_size) and y.reshape(B * T)",
            stepping(step_doing(*RIGHT_ORDER, loss_of=crossed_loss))),
    Mistake(INPUTS_AS_TARGETS, INPUTS_AS_TARGETS_FIX,
            stepping(step_doing(*RIGHT_ORDER, loss_of=loss_against_inputs))),
    Mistake("shift the targets again",
            "y[b, t] already is the token after x[b, t]: compare logits[:, t] with y[:, t]",
            stepping(step_doing(*RIGHT_ORDER, loss_of=shifted_loss))),
    Mistake("clip the gradients' norm",
            "the step is plain AdamW on the gradients backward() wrote: leave "
            "clip_grad_norm_ out (the grader's training does no clipping either)",
            stepping(step_doing("zero_grad", "loss", "backward", "clip", "step"))),
]


# -- judging (the training loop's checks judge alike) ---------------------------------------
def close(a: float, b: float) -> bool:
    return abs(a - b) <= ATOL + RTOL * abs(b)


def never_moved(weights: dict[str, torch.Tensor], model: dict[str, Any]) -> bool:
    """Whether the weights after training are those the harness built the model with."""
    start = artifacts.trainable_model(model["config"], model["seed"]).state_dict()
    return all(torch.equal(weights[k], start[k]) for k in start)


def explaining(no_graph: Callable[[], str]) -> Callable[[Call], str]:
    """A training check's note on an error no mistake names: a loss with no graph
    (`no_graph()` asks how, in that check's terms and the learner's language),
    logits left (B, T, vocab_size), or a batch flattened with .view()."""
    def explain(call: Call) -> str:
        message = str(call.outcome[1])
        if "does not require grad" in message:
            return "\n" + tr("The loss has no graph to run backward() through: {how}",
                             how=no_graph())
        if "Expected target size" in message or "size mismatch" in message:
            return "\n" + tr("F.cross_entropy reads dimension 1 as the classes: flatten the "
                             "logits to (B*T, vocab_size) and the targets to (B*T,) first.")
        if "view size is not compatible" in message:
            return "\n" + tr("x and y may be views that are not contiguous, as problem 19's "
                             "get_batch may return them (rows[:, :-1] and rows[:, 1:] of "
                             "one tensor): .view() cannot flatten those, .reshape() can.")
        return ""
    return explain


def same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    """Two runs' final weights are the same, within what training's rounding allows."""
    return a.keys() == b.keys() and all(
        torch.allclose(a[k], b[k], rtol=0, atol=TRAINED_WEIGHTS_ATOL) for k in a)


def same_training(a: Outcome, b: Outcome) -> bool:
    """Two runs' outcomes are the same: the same losses and the same final weights."""
    if a[0] != b[0] or a[0] == "error":
        return a == b
    (losses_a, weights_a), (losses_b, weights_b) = a[1], b[1]
    return (len(losses_a) == len(losses_b)
            and all(isinstance(x, float) and close(x, y) for x, y in zip(losses_a, losses_b))
            and same_weights(weights_a, weights_b))


def expect_floats(returned: list) -> None:
    for step, value in enumerate(returned, start=1):
        if isinstance(value, float):
            continue
        if isinstance(value, torch.Tensor):
            raise GradeFailure(tr("train_step() returned a tensor at step {step}, not a float: "
                                  "a tensor of the loss holds the graph of the whole step for "
                                  "as long as the caller keeps it (a training loop keeps every "
                                  "one), and prints as tensor(..., grad_fn=...); return "
                                  "loss.item()", step=step))
        what = value if isinstance(value, str) else a_kind(type(value).__name__)
        raise GradeFailure(tr("train_step() returned {what} at step {step}, not a float; "
                              "return loss.item()", what=what, step=step))


def judge(got: Any, expected: tuple, call: Call) -> None:
    returned, weights = got
    expected_losses, expected_weights = expected
    expect_floats(returned)
    for step, value in enumerate(returned, start=1):
        if not math.isfinite(value):  # before the weights: a nan step may leave them be
            why = (" " + tr("A mean over no positions at all is nan: were the logits or the "
                            "targets sliced to nothing (shifted again, on windows of one "
                            "token)?") if math.isnan(value) else "")
            raise GradeFailure(tr("the loss train_step() returned at step {step} is {value}, "
                                  "expected {expected:.6f}.", step=step, value=value,
                                  expected=expected_losses[step - 1]) + why)
    if never_moved(weights, call.args[0]):
        calls = tr("1 call") if len(returned) == 1 else tr("{n} calls", n=len(returned))
        raise GradeFailure(tr("after {calls} of train_step() the weights are where they "
                              "started: optimizer.step() never changed them", calls=calls))
    for step, (value, want) in enumerate(zip(returned, expected_losses), start=1):
        if not close(value, want):
            losses = ", ".join(f"{v:.6f}" for v in returned)
            wanted = ", ".join(f"{v:.6f}" for v in expected_losses)
            raise GradeFailure(tr("the loss train_step() returned at step {step} of {steps} "
                                  "is {value:.6f}, expected {expected:.6f}\n"
                                  "  losses returned: {losses}\n  expected:        {wanted}",
                                  step=step, steps=len(returned), value=value, expected=want,
                                  losses=losses, wanted=wanted))
    for name, want in expected_weights.items():
        error = (weights[name] - want).abs().max().item()
        if not error <= TRAINED_WEIGHTS_ATOL:  # nan is within no bound
            raise GradeFailure(tr("the losses are right, but after the last step the weights "
                                  "`{name}` differ from the expected ones by up to {error:.2e} "
                                  "(more than the {allowed:g} allowed): each step must leave "
                                  "the model as one AdamW step on that batch does", name=name,
                                  error=error, allowed=TRAINED_WEIGHTS_ATOL))


explain_error = explaining(lambda: tr("was the forward pass run under torch.no_grad(), or "
                                      "the loss rebuilt from a number (.item())?"))


# The learners' copy judges its stored runs by the same closeness (a rule of
# grader/release/practice/judge.py): the losses and the weights as same_training does.
PRACTICE_RULE = "training-steps"

CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_training,
                    fallback_hint=explain_error, harness="train_steps", goldens=False)

test_corpus_training, test_random_training = CONTRACT.tests(
    "A few AdamW steps of a small GPT on batches of the corpus: every loss and the final "
    "weights",
    "Training steps of small random GPTs on random tokens, against the reference",
    draw_example)
