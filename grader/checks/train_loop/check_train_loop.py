"""Checks for problem 30, train-loop: batches, the schedule, clipping, steps and evaluations.

A training loop changes its model, so, like a training step (check_train_step.py),
each check runs through a harness, `harness:train_loop_run`: a GPT and an AdamW
built afresh from a seed, in the worker for the submission and here for the
reference, then `train_loop()` once. It hands back the log the loop returned (or
yielded), the weights after the last step, and how many forward passes ran with
gradients on or off, in training or evaluation mode: an evaluation that builds a
graph, or steps taken in evaluation mode, give the same numbers on this GPT
(it has no dropout) and are seen only there.

The weights after many AdamW steps move with float rounding from one machine to
another, so every case is judged against the live reference (goldens=False).
"""

from __future__ import annotations

import math
from functools import cache
from types import SimpleNamespace
from typing import Any

import torch
from hypothesis import strategies as st

from grader.checks.train_step.check_train_step import (
    DEEPER,
    INPUTS_AS_TARGETS,
    INPUTS_AS_TARGETS_FIX,
    SMALL,
    close,
    corpus,
    explaining,
    get_batch,
    never_moved,
    same_weights,
)
from grader.checks.train_step.check_train_step import flat_loss as loss_of
from grader.grading.contracts.contract import Contract
from grader.grading.judging.schedule_rates import first_other_rate
from grader.grading.subject.kata import Call
from grader.grading.values.equality import Outcome
from grader.grading.values.failures import GradeFailure, Mistake
from grader.grading.values.tolerances import TRAINED_WEIGHTS_ATOL
from grader.locale import tr
from grader.sandbox.worker import harnesses
from grader.wording import a_kind


@cache
def texts() -> tuple[torch.Tensor, torch.Tensor]:
    """The start of the shipped corpus, split nine tenths for training and one tenth
    for validation, as `gpt-kata train` splits the whole of it."""
    data = corpus()[:10_000]
    return data[:9_000], data[9_000:]


def loop_case(config: dict[str, int], seed: int, *, steps: int, batch_size: int = 4,
              context_length: int | None = None, max_lr: float = 1e-2, min_lr: float = 1e-3,
              warmup_steps: int = 2, max_norm: float = 0.5, eval_every: int = 5,
              eval_batches: int = 2, weight_decay: float = 0.01, data_seed: int = 0,
              data: tuple[torch.Tensor, torch.Tensor] | None = None,
              groups: str | None = None) -> tuple:
    """A case's fifteen arguments. The optimizer starts at max_lr, so that a loop
    which never sets the rate still trains, at the wrong rates; `groups` asks for
    param groups other than the one of every parameter (harnesses.adamw_in_groups),
    where a rate set in one group only leaves the others at max_lr."""
    train_data, val_data = data if data is not None else texts()
    optimizer = {"lr": max_lr, "weight_decay": weight_decay}
    if groups is not None:
        optimizer["groups"] = groups
    return ({"config": dict(config), "seed": seed}, optimizer,
            train_data, val_data,
            torch.Generator().manual_seed(data_seed),
            torch.Generator().manual_seed(data_seed + 1000),
            steps, batch_size, context_length or config["context_length"],
            max_lr, min_lr, warmup_steps, max_norm, eval_every, eval_batches)


def cases() -> dict[str, tuple]:
    return {
        "twenty-steps-on-the-corpus": loop_case(SMALL, 0, steps=20, warmup_steps=5),
        "steps-not-a-multiple-of-eval-every": loop_case(SMALL, 1, steps=7, eval_every=3,
                                                         data_seed=1),
        "no-warm-up": loop_case(SMALL, 2, steps=8, warmup_steps=0, eval_every=4, data_seed=2),
        "evaluate-every-step": loop_case(SMALL, 3, steps=4, eval_every=1, eval_batches=1,
                                         data_seed=3),
        "one-step": loop_case(SMALL, 4, steps=1, warmup_steps=0, data_seed=4),
        "clipping-far-below-the-norm": loop_case(SMALL, 5, steps=6, max_norm=0.01,
                                                 eval_every=3, data_seed=5),
        "clipping-never-reached": loop_case(SMALL, 6, steps=6, max_norm=1e3, eval_every=3,
                                            data_seed=6),
        "a-deeper-model": loop_case(DEEPER, 7, steps=10, batch_size=8, max_lr=3e-3,
                                    min_lr=3e-4, warmup_steps=3, max_norm=1.0, eval_every=5,
                                    eval_batches=3, weight_decay=0.1, data_seed=7),
        "windows-shorter-than-the-context": loop_case(DEEPER, 8, steps=5, batch_size=2,
                                                      context_length=5, eval_every=2,
                                                      data_seed=8),
        "nanogpt-param-groups": loop_case(SMALL, 9, steps=6, eval_every=3, weight_decay=0.1,
                                          data_seed=9, groups=harnesses.NANOGPT_GROUPS),
        "a-param-group-per-parameter": loop_case(DEEPER, 10, steps=6, warmup_steps=3,
                                                 eval_every=3, data_seed=10,
                                                 groups=harnesses.GROUP_PER_PARAMETER),
    }


def draw_example(data: st.DataObject) -> tuple:
    n_head = data.draw(st.sampled_from([1, 2]), label="n_head")
    config = {
        "vocab_size": data.draw(st.integers(2, 12), label="vocab_size"),
        "context_length": data.draw(st.integers(1, 8), label="context_length"),
        "n_layer": 1,
        "n_head": n_head,
        "n_embd": n_head * data.draw(st.sampled_from([4, 8]), label="n_embd per head"),
    }
    length = data.draw(st.integers(1, config["context_length"]), label="context_length of "
                                                                        "the batches")
    sizes = [data.draw(st.integers(length + 1, 40), label=f"tokens of the {name} text")
             for name in ("training", "validation")]
    ids = data.draw(st.lists(st.integers(0, config["vocab_size"] - 1), min_size=sum(sizes),
                             max_size=sum(sizes)), label="token ids")
    tokens = torch.tensor(ids, dtype=torch.long)
    steps = data.draw(st.integers(1, 6), label="steps")
    max_lr = data.draw(st.sampled_from([1e-3, 3e-3, 1e-2]), label="max_lr")
    return loop_case(
        config, data.draw(st.integers(0, 2**16), label="seed of the weights"), steps=steps,
        batch_size=data.draw(st.integers(1, 3), label="batch_size"), context_length=length,
        max_lr=max_lr, min_lr=max_lr * data.draw(st.sampled_from([0.0, 0.1, 1.0]),
                                                 label="min_lr / max_lr"),
        warmup_steps=data.draw(st.integers(0, steps - 1), label="warmup_steps"),
        max_norm=data.draw(st.sampled_from([0.01, 0.5, 1.0, 100.0]), label="max_norm"),
        eval_every=data.draw(st.integers(1, 4), label="eval_every"),
        eval_batches=data.draw(st.integers(1, 2), label="eval_batches"),
        weight_decay=data.draw(st.sampled_from([0.0, 0.01, 0.1]), label="weight_decay"),
        data_seed=data.draw(st.integers(0, 2**16), label="seed of the generators"),
        data=(tokens[:sizes[0]], tokens[sizes[0]:]),
        groups=data.draw(st.sampled_from([None, harnesses.NANOGPT_GROUPS,
                                          harnesses.GROUP_PER_PARAMETER]),
                         label="param groups of the optimizer"))


# -- known mistakes: whole loops, run through the same harness ----------------------------
def rate_at(step: int, max_lr: float, min_lr: float, warmup_steps: int, steps: int) -> float:
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / max(1, steps - warmup_steps))
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))


def knobbed_loop(model, optimizer, train_data, val_data, generator, eval_generator, steps,
                 batch_size, context_length, max_lr, min_lr, warmup_steps, max_norm,
                 eval_every, eval_batches, *, grad_in_eval: bool = False,
                 back_to_train: bool = True, eval_mode: bool = True, redraw: bool = False,
                 eval_from: str = "eval_generator", order: str = "texts", rate_step: int = 0,
                 rate: str = "before", clip: str = "between", zero_grad: bool = True,
                 first_eval: bool = True, last_eval: bool = True,
                 inputs_as_targets: tuple[str, ...] = ()) -> list:
    """The loop of the statement, or one of its known mistakes:
    grad_in_eval evaluates with gradients on; back_to_train=False never calls
    model.train() after evaluating; eval_mode=False never calls model.eval();
    redraw draws the evaluation batches anew at every evaluation; eval_from
    "generator" draws them from the training generator; order "validation first"
    draws the validation text's batches before the training text's, "interleaved"
    one of each in turn; rate_step shifts the step the schedule is asked for; rate
    "after" sets it after optimizer.step(), "first group" in
    optimizer.param_groups[0] only, "never" leaves the optimizer's; clip "after"
    clips after the step, "before" before backward(), "never" not at all;
    first_eval/last_eval=False leave out the evaluation before training or the one
    at the end; inputs_as_targets names where ("step", "evaluation") the loss is
    computed against the inputs x instead of the targets y."""
    source = eval_generator if eval_from == "eval_generator" else generator

    def draw() -> list:
        if order == "interleaved":
            pairs = [[get_batch(data, context_length, batch_size, source)
                      for data in (train_data, val_data)] for _ in range(eval_batches)]
            return [list(batches) for batches in zip(*pairs)]
        texts = (train_data, val_data) if order == "texts" else (val_data, train_data)
        drawn = [[get_batch(data, context_length, batch_size, source)
                  for _ in range(eval_batches)] for data in texts]
        return drawn if order == "texts" else drawn[::-1]

    def evaluate(batches: list) -> float:
        if eval_mode:
            model.eval()
        with torch.set_grad_enabled(grad_in_eval):
            losses = [loss_of(model, x, x if "evaluation" in inputs_as_targets else y).item()
                      for x, y in batches]
        if back_to_train:
            model.train()
        return sum(losses) / len(losses)

    def set_rate(step: int) -> None:
        groups = optimizer.param_groups[:1] if rate == "first group" else optimizer.param_groups
        for group in groups:
            group["lr"] = rate_at(max(0, step + rate_step), max_lr, min_lr, warmup_steps, steps)

    fixed = None if redraw else draw()
    log = []
    for step in range(steps + 1):
        due = step % eval_every == 0 if last_eval else step % eval_every == 0 and step < steps
        if (due or (last_eval and step == steps)) and (first_eval or step > 0):
            sets = draw() if redraw else fixed
            log.append((step, *(evaluate(batches) for batches in sets)))
        if step == steps:
            break
        if rate in ("before", "first group"):
            set_rate(step)
        x, y = get_batch(train_data, context_length, batch_size, generator)
        if zero_grad:
            optimizer.zero_grad(set_to_none=True)
        if clip == "before":
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        loss = loss_of(model, x, x if "step" in inputs_as_targets else y)
        loss.backward()
        if clip == "between":
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        if clip == "after":
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if rate == "after":
            set_rate(step)
    return log


def looping(**knobs: Any) -> Any:
    """A mistake's run: the knobbed loop as a submission's train_loop, through the harness."""
    class Solution:
        def train_loop(self, *args):
            return knobbed_loop(*args, **knobs)

    module = SimpleNamespace(Solution=Solution)
    return lambda *args: harnesses.train_loop_run(module, *args)


MISTAKES = [
    Mistake("never zero the gradients",
            "backward() adds to .grad: clear the gradients (optimizer.zero_grad()) before "
            "every backward(), or each step follows the sum of all the gradients so far",
            looping(zero_grad=False)),
    Mistake("clip the gradients after optimizer.step(), before backward(), or not at all",
            "clip by the global norm to max_norm between loss.backward() and "
            "optimizer.step(): the step reads p.grad when it is called, so it follows the "
            "clipped gradients only if they were clipped just before it (with problem 28's "
            "clip_grad_norm or torch.nn.utils.clip_grad_norm_)",
            looping(clip="after"), looping(clip="never"), looping(clip="before"),
            id="clip-in-the-wrong-place-or-not-at-all"),
    Mistake("ask the schedule for the rate of the next step",
            "step 0 trains with learning_rate(0, ...): ask problem 27's schedule for the "
            "rate of the step about to be taken, counted from 0",
            looping(rate_step=1)),
    Mistake("set the learning rate after optimizer.step()",
            "set every param group's 'lr' before optimizer.step(): a rate set after it is "
            "used only by the next step, so each step trains at the rate of the one before",
            looping(rate="after")),
    Mistake("never set the learning rate",
            "the optimizer keeps the rate it was built with unless you change it: before "
            "every step, set group['lr'] = learning_rate(step, ...) for every group in "
            "optimizer.param_groups", looping(rate="never")),
    Mistake("set the learning rate in the first param group only",
            "an optimizer may have several param groups (nanoGPT's has two: the matrices "
            "with weight decay, the biases and LayerNorm weights without), and each has its "
            "own 'lr': set it in every one, for group in optimizer.param_groups, or the "
            "others train at the rate they had", looping(rate="first group")),
    Mistake("evaluate with gradients on",
            "wrap the evaluation in torch.no_grad(): its losses are only read, and with "
            "gradients on every forward pass builds a graph that is never used",
            looping(grad_in_eval=True), looping(grad_in_eval=True, eval_mode=False)),
    Mistake("leave the model in evaluation mode after evaluating",
            "call model.train() again after an evaluation: steps taken in evaluation mode "
            "would train without dropout in a model that has it",
            looping(back_to_train=False)),
    Mistake("evaluate in training mode",
            "call model.eval() before an evaluation (and model.train() after it): a model "
            "with dropout would measure a different, noisier model than the one it is",
            looping(eval_mode=False)),
    Mistake("draw new evaluation batches at every evaluation",
            "draw the evaluation batches once, before the first step, from eval_generator, "
            "and measure those same batches every time: then two values of the log differ "
            "only because the model changed (nanoGPT's estimate_loss draws new ones each "
            "time, from the generator of the training batches)",
            looping(redraw=True), looping(redraw=True, eval_from="generator")),
    Mistake("draw the evaluation batches in the wrong order",
            "draw all eval_batches batches of train_data first, then all eval_batches of "
            "val_data, from eval_generator: each draw moves the generator on, so batches "
            "drawn in another order are other windows",
            looping(order="validation first"), looping(order="interleaved")),
    Mistake("draw the evaluation batches from the training generator",
            "draw them from eval_generator: the training batches are then the same whatever "
            "the evaluation does, and the same as a loop without evaluations draws",
            looping(eval_from="generator")),
    Mistake("leave out the evaluation before the first step",
            "evaluate at step 0 too, before any training: it is the loss of the untrained "
            "model, where the curve starts", looping(first_eval=False)),
    Mistake("leave out the evaluation at the end",
            "evaluate also after the last step (step == steps), even when steps is not a "
            "multiple of eval_every: it is the loss of the model the loop hands back",
            looping(last_eval=False)),
    Mistake(INPUTS_AS_TARGETS, INPUTS_AS_TARGETS_FIX,
            looping(inputs_as_targets=("step",)),
            looping(inputs_as_targets=("step", "evaluation")),
            looping(inputs_as_targets=("evaluation",))),
]


# -- judging ------------------------------------------------------------------------------
def graphs(modes: dict[str, int]) -> int:
    """Forward passes with gradients on: one per step in a right loop."""
    return modes["grad, train"] + modes["grad, eval"]


def same_training(a: Outcome, b: Outcome) -> bool:
    """Two runs' outcomes are the same: the same log, the same final weights, and
    their forward passes in the same modes."""
    if a[0] != b[0] or a[0] == "error":
        return a == b
    (log_a, weights_a, modes_a, _), (log_b, weights_b, modes_b, _) = a[1], b[1]
    if isinstance(log_a, str) or isinstance(log_b, str):
        return log_a == log_b
    return (len(log_a) == len(log_b)
            and all(len(x) == 3 and len(y) == 3 and x[0] == y[0]
                    and all(isinstance(u, float) and close(u, v) for u, v in zip(x[1:], y[1:]))
                    for x, y in zip(log_a, log_b))
            and graphs(modes_a) == graphs(modes_b)
            and {k for k, n in modes_a.items() if n} == {k for k, n in modes_b.items() if n}
            and same_weights(weights_a, weights_b))


def describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return tr("a tensor (return loss.item(), a float, not the tensor)")
    return repr(value) if isinstance(value, str) else a_kind(type(value).__name__)


def expect_log_entries(log: Any) -> None:
    if isinstance(log, str):
        raise GradeFailure(tr("train_loop() returned {log}, not a list of (step, train_loss, "
                              "val_loss) tuples", log=log))
    for index, entry in enumerate(log):
        if isinstance(entry, str) or len(entry) != 3:
            what = entry if isinstance(entry, str) else tr("a tuple of {count}",
                                                           count=len(entry))
            raise GradeFailure(tr("entry {index} of the log is {what}, not a tuple (step, "
                                  "train_loss, val_loss)", index=index, what=what))
        step, *losses = entry
        if not isinstance(step, int) or isinstance(step, bool):
            raise GradeFailure(tr("entry {index} of the log has the step {step}, not an int",
                                  index=index, step=describe(step)))
        for name, value in zip(("train_loss", "val_loss"), losses):
            if not isinstance(value, float):
                raise GradeFailure(tr("the {name} of entry {index} of the log (step {step}) "
                                      "is {value}, not a float", name=name, index=index,
                                      step=step, value=describe(value)))


def judge(got: Any, expected: tuple, call: Call) -> None:
    log, weights, modes, rates = got
    want_log, want_weights, _, want_rates = expected
    steps = call.named["steps"]
    expect_log_entries(log)
    evaluated, wanted = [entry[0] for entry in log], [entry[0] for entry in want_log]
    if evaluated != wanted:
        raise GradeFailure(tr("the log has evaluations at steps {evaluated}, expected at "
                              "{wanted}: at step 0, every eval_every steps, and at step "
                              "{steps} after the last one", evaluated=evaluated,
                              wanted=wanted, steps=steps))
    if graphs(modes) > steps:
        raise GradeFailure(tr("{passes} forward passes ran with gradients on, for {steps} "
                              "training steps: the evaluations ran with gradients on (wrap "
                              "them in torch.no_grad())", passes=graphs(modes), steps=steps))
    if modes["grad, eval"]:
        raise GradeFailure(tr("{count} of the {steps} training steps ran with the model in "
                              "evaluation mode: call model.train() after evaluating",
                              count=modes["grad, eval"], steps=steps))
    if modes["no grad, train"]:
        raise GradeFailure(tr("{count} forward passes of the evaluations ran with the model "
                              "in training mode: call model.eval() before evaluating",
                              count=modes["no grad, train"]))
    if never_moved(weights, call.named["model"]):
        raise GradeFailure(tr("after {steps} steps the weights are where they started: "
                              "optimizer.step() never changed them", steps=steps))
    for name, want in want_weights.items():
        error = (weights[name] - want).abs().max().item()
        if not error <= TRAINED_WEIGHTS_ATOL:
            if rate := first_other_rate(rates, want_rates):
                raise GradeFailure(tr("after the {steps} steps the weights `{name}` differ "
                                      "from the expected ones by up to {error:.2e}: {rate}",
                                      steps=steps, name=name, error=error, rate=rate))
            raise GradeFailure(tr("after the {steps} steps the weights `{name}` differ from "
                                  "the expected ones by up to {error:.2e} (more than the "
                                  "{allowed:g} allowed): some step trained on another batch, "
                                  "at another rate, or with other gradients", steps=steps,
                                  name=name, error=error, allowed=TRAINED_WEIGHTS_ATOL))
    for (step, *losses), (_, *wants) in zip(log, want_log):
        for name, value, want in zip(("train", "validation"), losses, wants):
            if not close(value, want):
                # "Within the tolerance", not "right": a rate wrong by a little, on a
                # drawn run of a step or two, can move them by less than it allows.
                loss = (tr("the train loss") if name == "train"
                        else tr("the validation loss"))
                raise GradeFailure(tr("the weights are within the {allowed:g} allowed, but "
                                      "{loss} logged at step {step} is {value:.6f}, expected "
                                      "{expected:.6f}: each evaluation is the mean loss of the "
                                      "same fixed batches", allowed=TRAINED_WEIGHTS_ATOL,
                                      loss=loss, step=step, value=value, expected=want))


explain_error = explaining(lambda: tr("did a training step run under torch.no_grad() (left "
                                      "on after an evaluation)?"))


# The learners' copy judges its stored runs by the same closeness (a rule of
# grader/release/practice/judge.py): the log, its modes and the weights as same_training does.
PRACTICE_RULE = "training-loop"

CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, matches=same_training,
                    fallback_hint=explain_error, harness="train_loop_run", goldens=False)

test_corpus_training, test_random_training = CONTRACT.tests(
    "Training loops of small GPTs on the corpus: the evaluations logged, the final weights, "
    "and no graph built or mode left wrong",
    "Training loops of small random GPTs on random texts, against the reference",
    draw_example)
