"""Checks for loss: cross-entropy over every position of a batch."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_tensor
from grader.grading.subject.cases import context_length, corpus_prefix, prompt_ids
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.values.failures import GradeFailure
from grader.locale import tr
from grader.model import artifacts
from grader.wording import a_kind


def flat(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)


def pass_the_logits_to_cross_entropy_as_they_are(logits, targets):
    return F.cross_entropy(logits, targets)


def apply_softmax_before_cross_entropy(logits, targets):
    return F.cross_entropy(*flat(torch.softmax(logits, -1), targets))


def take_the_log_of_softmax_by_hand(logits, targets):
    return F.nll_loss(*flat(torch.log(torch.softmax(logits, -1)), targets))


def use_nll_loss_on_the_raw_logits(logits, targets):
    return F.nll_loss(*flat(logits, targets))


def log_softmax_over_the_flat_positions(logits, targets):
    flat_logits, flat_targets = flat(logits, targets)
    return F.nll_loss(F.log_softmax(flat_logits, dim=0), flat_targets)


def log_softmax_over_time(logits, targets):
    return F.nll_loss(*flat(F.log_softmax(logits, dim=1), targets))


def sum_the_losses_instead_of_averaging_them(logits, targets):
    return F.cross_entropy(*flat(logits, targets), reduction="sum")


def score_the_last_position_only(logits, targets):
    return F.cross_entropy(logits[:, -1], targets[:, -1])


def flatten_the_logits_time_first(logits, targets):
    return F.cross_entropy(logits.transpose(0, 1).reshape(-1, logits.shape[-1]),
                           targets.reshape(-1))


def flatten_the_targets_time_first(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.transpose(0, 1).reshape(-1))


def shift_the_targets_again(logits, targets):
    return F.cross_entropy(*flat(logits[:, :-1], targets[:, 1:]))


MISTAKES = mistakes_of(globals())


@torch.no_grad()
def shipped_windows(*starts: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The shipped model's logits on corpus windows, and each window shifted by one."""
    n = context_length()
    ids = prompt_ids(corpus_prefix(max(starts) + n + 1))[0]
    inputs = torch.stack([ids[s:s + n] for s in starts])
    targets = torch.stack([ids[s + 1:s + n + 1] for s in starts])
    return artifacts.shipped_model()(inputs), targets


def cases() -> dict[str, tuple]:
    vocab = len(artifacts.shipped_vocab())
    confident = torch.zeros(1, 3, vocab)
    confident[0, :, 0] = 1e4  # certain of token 0, which is never the target
    return {
        "shipped-windows": shipped_windows(0, 100),
        "one-window": shipped_windows(7),
        "one-position": (shipped_windows(0)[0][:, :1], shipped_windows(0)[1][:, :1]),
        "uniform-logits": (torch.zeros(2, 5, vocab), torch.arange(10).reshape(2, 5)),
        "confident-and-wrong": (confident, torch.tensor([[1, 2, 3]])),
        "float64": tuple(t.double() if t.is_floating_point() else t
                         for t in shipped_windows(50)),
    }


def draw_example(data: st.DataObject) -> tuple:
    """Random logits and targets of small random shapes."""
    batch = data.draw(st.integers(1, 3), label="B")
    length = data.draw(st.integers(1, 6), label="T")
    vocab = data.draw(st.integers(2, 20), label="vocab_size")
    scale = data.draw(st.sampled_from([1.0, 5.0, 50.0]), label="scale of the logits")
    generator = torch.Generator().manual_seed(data.draw(st.integers(0, 2**16), label="seed"))
    logits = torch.randn(batch, length, vocab, generator=generator) * scale
    return logits, torch.randint(vocab, (batch, length), generator=generator)


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    expect_tensor(got, expected, tr("the loss"))
    if got.dtype != expected.dtype:  # the statement: float64 logits, a float64 loss
        raise GradeFailure(tr("the loss is {dtype}, but the logits are {logits_dtype}: "
                              "compute it from the logits as they are, without .float() "
                              "or a dtype of your own",
                              dtype=str(got.dtype).removeprefix("torch."),
                              logits_dtype=str(expected.dtype).removeprefix("torch.")))


CONTRACT = Contract(cases=cases, mistakes=MISTAKES, judge=judge)

test_fixed_batches, test_random_batches = CONTRACT.tests(
    "The loss of fixed batches: the shipped model's, uniform and overconfident logits",
    "The loss of random logits and targets, against the reference",
    draw_example)


def test_the_loss_backpropagates(kata: Kata) -> None:
    """The loss keeps its graph: loss.backward() reaches the logits, with the right gradient"""
    logits, targets = shipped_windows(0, 100)
    got = kata.outcome("harness:loss_backward", logits, targets, arg_names=CONTRACT.arg_names)
    if got[0] == "error":
        raise GradeFailure(tr("loss() raised {error}", error=got[1]))
    loss, gradient = got[1]
    if not isinstance(loss, torch.Tensor):
        raise GradeFailure(tr("loss() returned {what}, not a tensor that training can call "
                              ".backward() on", what=a_kind(type(loss).__name__)))
    if gradient is None:
        raise GradeFailure(tr("loss.backward() cannot reach the logits: the loss has no "
                              "graph back to them. Was it .detach()-ed, rebuilt from a number "
                              "(.item(), torch.tensor(...)), or computed under "
                              "torch.no_grad()? Return F.cross_entropy's tensor as it is"))
    leaf = logits.clone().requires_grad_(True)
    with torch.enable_grad():
        F.cross_entropy(*flat(leaf, targets)).backward()
    expect_tensor(gradient, leaf.grad, tr("the gradient of the loss with respect to the logits"))
