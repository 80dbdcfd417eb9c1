"""Checks for problem 26, adamw: one AdamW update by hand, as torch.optim.AdamW makes it.

The method runs through `harness:adamw_update` (grader/sandbox/worker/harnesses.py), which
hands it copies: an update made in place and one that builds new tensors are
graded alike. A case's state after several steps is made by torch.optim.AdamW
itself, so the cases are the updates a real run makes.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from hypothesis import strategies as st
from torch.optim import adamw as torch_adamw

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_tensor
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import ATOL, RTOL
from grader.locale import tr
from grader.wording import a_kind

Tensors = list[torch.Tensor]
Update = tuple[Tensors, Tensors, Tensors]


def update(params: Tensors, grads: Tensors, exp_avgs: Tensors, exp_avg_sqs: Tensors,
           step: int, lr: float, betas: tuple[float, float], eps: float, weight_decay: float,
           *, coupled: bool = False, corrected: bool = True, eps_inside: bool = False,
           decay_after: bool = False, counted: int = 1, decay_lr: bool = True,
           second_corrected: bool = True, eps_uncorrected: bool = False,
           swapped: str = "", stale: tuple[str, ...] = ()) -> Update:
    """AdamW's update, or one of its known mistakes: `coupled` adds the decay to the
    gradient (Adam with L2), `corrected=False` leaves the bias correction out,
    `eps_inside` adds eps under the square root, `decay_after` shrinks the weight
    after the Adam move, `counted` is what the step count grows by first, and
    `decay_lr=False` shrinks the weight by weight_decay alone, not lr * weight_decay
    (the paper's decoupled decay, which torch scales by lr); `second_corrected=False`
    corrects the first moment's bias only; `eps_uncorrected` folds both corrections into
    the step size, lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t), and divides by
    sqrt(exp_avg_sq) + eps (the Adam paper's faster form, whose eps is not torch's);
    `swapped` gives exp_avg beta2 and exp_avg_sq beta1, "everywhere" (the betas unpacked
    in the wrong order, corrections too) or "in the averages" only; `stale` names the
    averages returned as they were given (m = beta1 * m + ... rebinds a name in a loop
    and leaves the list's entry as it was), though the move used their new values."""
    beta1, beta2 = betas[::-1] if swapped == "everywhere" else betas
    # The betas each average is made with: swapped in its line only, or with the rest.
    m_beta, v_beta = (beta2, beta1) if swapped == "in the averages" else (beta1, beta2)
    t = step + counted
    first = 1 - beta1 ** t if corrected else 1.0
    second = 1 - beta2 ** t if corrected and second_corrected else 1.0
    shrink = 1 - (lr * weight_decay if decay_lr else weight_decay)
    out: Update = ([], [], [])
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        if coupled:
            g = g + weight_decay * p
        elif not decay_after:
            p = p * shrink
        old_m, old_v = m, v
        m = m_beta * m + (1 - m_beta) * g
        v = v_beta * v + (1 - v_beta) * g * g
        denom = (v / second + eps).sqrt() if eps_inside else v.sqrt() / math.sqrt(second) + eps
        if eps_uncorrected:
            p = p - lr * math.sqrt(second) / first * m / (v.sqrt() + eps)
        else:
            p = p - lr / first * m / denom
        if decay_after and not coupled:
            p = p * shrink
        m = old_m if "exp_avg" in stale else m
        v = old_v if "exp_avg_sq" in stale else v
        for kept, value in zip(out, (p, m, v)):
            kept.append(value)
    return out


def eps_under_the_root_of_the_raw_average(params, grads, exp_avgs, exp_avg_sqs, step, lr,
                                          betas, eps, weight_decay) -> Update:
    """sqrt(exp_avg_sq + eps) / sqrt(1 - beta2 ** t): eps under the root, before the
    correction."""
    beta1, beta2 = betas
    t = step + 1
    out: Update = ([], [], [])
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        p = p * (1 - lr * weight_decay)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1 ** t) * m / ((v + eps).sqrt() / math.sqrt(1 - beta2 ** t))
        for kept, value in zip(out, (p, m, v)):
            kept.append(value)
    return out


MISTAKES = mistakes_of(globals(), update)


# -- cases ------------------------------------------------------------------------------
def shapes_of_a_small_gpt() -> list[tuple[int, ...]]:
    """A weight matrix, its bias and a LayerNorm's weight: shapes a GPT's steps update."""
    return [(4, 3), (3,), (4,)]


def run_of_torch(steps: int, lr: float, weight_decay: float, seed: int,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 scale: float = 1.0, dtype: torch.dtype = torch.float32) -> tuple:
    """The arguments of update number `steps + 1` of a run of torch's AdamW on random
    gradients: its state after `steps` updates and a new gradient."""
    generator = torch.Generator().manual_seed(seed)
    weights = [torch.randn(s, generator=generator, dtype=dtype)
               for s in shapes_of_a_small_gpt()]
    leaves = [w.clone() for w in weights]
    avgs = [torch.zeros_like(w) for w in weights]
    sqs = [torch.zeros_like(w) for w in weights]
    counts = [torch.tensor(0.0) for _ in weights]
    for _ in range(steps):
        grads = [torch.randn(w.shape, generator=generator, dtype=dtype) * scale for w in leaves]
        torch_adamw_step(leaves, grads, avgs, sqs, counts, lr, betas, eps, weight_decay)
    grads = [torch.randn(w.shape, generator=generator, dtype=dtype) * scale for w in weights]
    return (leaves, grads, avgs, sqs, steps, lr, betas, eps, weight_decay)


def torch_adamw_step(weights: list[torch.Tensor], grads: list[torch.Tensor],
                     avgs: list[torch.Tensor], sqs: list[torch.Tensor],
                     counts: list[torch.Tensor], lr: float, betas: tuple[float, float],
                     eps: float, weight_decay: float) -> None:
    """One update of torch.optim.AdamW, in place, by the function its step() calls on
    the CPU (bit for bit the same, tests/test_train_it_yourself_references.py): the
    optimizer's first step() imports torch._dynamo, most of a second, and every grade
    of this problem would wait for it while its cases are built."""
    with torch.no_grad():
        try:
            torch_adamw.adamw(
                weights, grads, avgs, sqs, [], counts, foreach=False, capturable=False,
                differentiable=False, fused=None, grad_scale=None, found_inf=None,
                has_complex=False, amsgrad=False, beta1=betas[0], beta2=betas[1], lr=lr,
                weight_decay=weight_decay, eps=eps, maximize=False)
            return
        except TypeError:  # a torch whose function takes other arguments: the optimizer
            pass
    leaves = [w.requires_grad_(True) for w in weights]
    optimizer = torch.optim.AdamW(leaves, lr=lr, betas=betas, eps=eps,
                                  weight_decay=weight_decay)
    for leaf, grad, avg, sq, count in zip(leaves, grads, avgs, sqs, counts):
        leaf.grad = grad
        optimizer.state[leaf] = {"step": count, "exp_avg": avg, "exp_avg_sq": sq}
    optimizer.step()
    for leaf in leaves:
        leaf.grad = None
        leaf.requires_grad_(False)


def cases() -> dict[str, tuple]:
    return {
        "the-first-update": run_of_torch(0, 1e-2, 0.01, 0),
        "update-ten-of-a-run": run_of_torch(9, 1e-1, 0.1, 1),
        "strong-decay": run_of_torch(3, 1e-1, 0.5, 2),
        "no-weight-decay": run_of_torch(4, 3e-3, 0.0, 3),
        "tiny-gradients": run_of_torch(2, 1e-2, 0.01, 4, scale=1e-6),
        "late-in-a-run": run_of_torch(200, 1e-2, 0.1, 5, betas=(0.9, 0.95)),
        "float64": run_of_torch(5, 1e-1, 0.1, 6, dtype=torch.float64),
    }


def draw_example(data: st.DataObject) -> tuple:
    """Random parameters, gradients and state (zero at the first update)."""
    count = data.draw(st.integers(1, 3), label="number of parameters")
    shapes = [data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2).map(tuple),
                        label=f"shape of parameter {i}") for i in range(count)]
    step = data.draw(st.sampled_from([0, 0, 1, 2, 5, 30, 1000]), label="step")
    lr = data.draw(st.sampled_from([1e-3, 1e-2, 1e-1]), label="lr")
    betas = data.draw(st.sampled_from([(0.9, 0.999), (0.9, 0.95), (0.8, 0.99)]), label="betas")
    eps = data.draw(st.sampled_from([1e-8, 1e-6, 1e-3]), label="eps")
    weight_decay = data.draw(st.sampled_from([0.0, 0.01, 0.1, 0.5]), label="weight_decay")
    scale = data.draw(st.sampled_from([1e-6, 1e-2, 1.0]), label="scale of the gradients")
    generator = torch.Generator().manual_seed(data.draw(st.integers(0, 2**16), label="seed"))

    def randn(shape: tuple[int, ...], times: float = 1.0) -> torch.Tensor:
        return torch.randn(shape, generator=generator) * times

    params = [randn(s) for s in shapes]
    grads = [randn(s, scale) for s in shapes]
    avgs = [randn(s, scale) * (step > 0) for s in shapes]
    sqs = [randn(s, scale).square() * (step > 0) for s in shapes]
    return params, grads, avgs, sqs, step, lr, betas, eps, weight_decay


# -- judging ----------------------------------------------------------------------------
PARTS = ("params", "exp_avgs", "exp_avg_sqs")
# The learners' copy judges its stored updates by the same tolerances (a rule of
# closeness of grader/release/practice/judge.py): the weights by ATOL, the state at its
# own scale.
PRACTICE_RULE = "weights-and-state"


def judge(got: Any, expected: Update, call: Call) -> None:
    if got is None:
        raise GradeFailure(tr("adamw_step() returned None: return (params, exp_avgs, "
                              "exp_avg_sqs); if you updated the tensors in place, return the "
                              "lists you were given"))
    if not (isinstance(got, tuple) and len(got) == 3):
        raise GradeFailure(tr("adamw_step() returned {value}, not the three lists "
                              "(params, exp_avgs, exp_avg_sqs)", value=describe(got)))
    for name, tensors, wanted in zip(PARTS, got, expected):
        if not isinstance(tensors, (list, tuple)):
            raise GradeFailure(tr("the {name} returned are {value}, not a list of tensors, "
                                  "one for each parameter", name=name, value=describe(tensors)))
        if len(tensors) != len(wanted):
            raise GradeFailure(tr("the {name} returned hold {count} tensors, but there "
                                  "are {wanted} parameters: one each, in the order given",
                                  name=name, count=len(tensors), wanted=len(wanted)))
    # The state first: a wrong average explains a wrong weight, not the other way round.
    for name, tensors, wanted in zip(PARTS[::-1], got[::-1], expected[::-1]):
        for i, (tensor, want) in enumerate(zip(tensors, wanted)):
            # The averages are judged relative to their own size: for gradients of
            # 1e-6, exp_avg_sq is 1e-12, below any fixed absolute tolerance.
            atol = ATOL if name == "params" else RTOL * float(want.double().abs().max())
            expect_tensor(tensor, want, f"{name}[{i}]", atol=atol,
                          same_dtype_as=tr("the inputs"))


def describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return tr("a {kind} of {count} items", kind=type(value).__name__, count=len(value))
    return a_kind(type(value).__name__)


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, harness="adamw_update")

test_updates_of_torch_runs, test_random_updates = CONTRACT.tests(
    "AdamW updates of torch.optim.AdamW's own runs: the first, later ones, strong decay, "
    "tiny gradients, float64",
    "AdamW updates of random parameters, gradients and state, against the reference",
    draw_example)
