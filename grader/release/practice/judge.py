"""Whether an answer is the stored one, within float32's rounding.

A few rules of closeness, each named by the problems that cases.json says use
it, and none that could compute an answer: the practice grade has no
problem-specific judges. Where a problem allows several right answers (tokens
tied in score, say), the stored answer is the reference's; the instructor's
grade accepts the others too.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from grader.grading.judging.refusals import refusal_in
from grader.grading.judging.schedule_rates import first_other_rate
from grader.grading.values.tolerances import (
    ANGLE_ULPS,
    ATOL,
    ROTATION_MISTAKE_RTOL,
    RTOL,
    TRAINED_WEIGHTS_ATOL,
    activation_atol,
    logit_scale_rtol,
)
from grader.locale import tr
from grader.sandbox.wire.encoding import same_memory
from grader.wording import a_kind

# The rules a problem's answers are judged by, as cases.json names them.
RULES = ("", "activations", "filtering", "rotation", "own-scale", "weights-and-state",
         "training-steps", "training-loop", "passed-on", "logit-scale")
# The tolerances are the full grader's own (tolerances.py ships in the copy): the
# practice grade and the instructor's take and refuse the same near misses.


def same(got: Any, want: Any, activations: bool = False, own_scale: bool = False) -> bool:
    """Whether `got` is `want`; tensors within RTOL and ATOL, or, for a module's
    outputs (`activations`), within RTOL and an absolute bound of the tensor's scale,
    or (`own_scale`) within RTOL of the tensor's largest entry, a one-element tensor
    taken for a 0-d one."""
    if isinstance(want, torch.Tensor):
        return isinstance(got, torch.Tensor) and _same_tensor(got, want, activations, own_scale)
    if isinstance(want, bool) or want is None or isinstance(want, str):
        return type(got) is type(want) and got == want
    if isinstance(want, float):
        return (isinstance(got, (int, float)) and not isinstance(got, bool)
                and (math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL * 1e-3)
                     or (math.isnan(got) and math.isnan(want))))
    if isinstance(want, int):
        return isinstance(got, int) and not isinstance(got, bool) and got == want
    if isinstance(want, (list, tuple)):
        return (isinstance(got, (list, tuple)) and len(got) == len(want)
                and all(same(g, w, activations, own_scale) for g, w in zip(got, want)))
    if isinstance(want, dict):
        return (isinstance(got, dict) and got.keys() == want.keys()
                and all(same(got[k], want[k], activations, own_scale) for k in want))
    return bool(got == want)


def _same_tensor(got: torch.Tensor, want: torch.Tensor, activations: bool,
                 own_scale: bool) -> bool:
    if own_scale and want.dim() == 0 and got.numel() == 1:
        got = got.reshape(())
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if not want.is_floating_point():
        return bool(torch.equal(got, want))
    if own_scale:
        atol = RTOL * float(want.double().abs().max()) if want.numel() else 0.0
    else:
        atol = activation_atol(want) if activations else ATOL
    return bool(torch.allclose(got.double(), want.double(), rtol=RTOL, atol=atol,
                               equal_nan=not own_scale))


def same_refusal(got: str, want: str) -> bool:
    """Two errors ("Type: message") that are one refusal of the kata's models, each in
    its language: the copy stored its answers' in the language it was written in."""
    kind, _, said = got.partition(": ")
    other, _, stored = want.partition(": ")
    found = refusal_in(said)
    return kind == other and found is not None and found == refusal_in(stored)


def is_mistake(got: tuple[str, Any], mistake: tuple[str, Any], rule: str,
               args: tuple) -> bool:
    """Whether the learner's outcome is a stored mistake's, as the kata's diagnosis
    matches it: as a right answer is, but a rotation within ROTATION_MISTAKE_RTOL of the
    vectors' size (a mistake turns them by a whole wrong angle; its answer computed in
    another precision is still it)."""
    if rule == "rotation" and got[0] == mistake[0] == "value":
        return within(got[1], mistake[1], 0.0, ROTATION_MISTAKE_RTOL)
    return same_outcome(got, mistake, rule, args)


def same_outcome(got: tuple[str, Any], want: tuple[str, Any], rule: str = "",
                 args: tuple = ()) -> bool:
    """("value", x) or ("error", "Type: message"), the same by `rule`: "" for `same`,
    "activations" for a module's outputs, "filtering" for a filter of the logits in
    args[0], whose tied tokens may be kept in any order, "rotation" for vectors args[0]
    turned by angles of the positions from args[1] on, "own-scale" for tensors each
    judged relative to its own largest entry (gradients of 1e-6 are all below ATOL),
    "weights-and-state" for an optimizer's (weights, state, state, ...): the weights
    by ATOL, its state at its own scale, "training-steps" for what a training driver
    hands back, (losses, weights), "training-loop" for (log, weights, modes, rates):
    see training_difference, "logit-scale" for probabilities made from the logits in
    args[0] (same_at_logit_scale), and "passed-on" for the (call, text) callbacks a
    streamer's driver hands back: see by_call."""
    if got[0] != want[0]:
        return False
    if got[0] == "error":
        # A .grad read where there is none raises in whichever operation meets the None
        # first: clip-grad-norm's check (same_clipping) takes any two such errors for one
        # mistake, and so does its rule here.
        if rule == "own-scale" and all("NoneType" in str(o[1]) for o in (got, want)):
            return True
        return str(got[1]) == str(want[1]) or same_refusal(str(got[1]), str(want[1]))
    if rule == "filtering":
        return same_filtering(got[1], want[1], args[0])
    if rule == "rotation":
        return same_rotation(got[1], want[1], args)
    if rule == "logit-scale":
        return same_at_logit_scale(got[1], want[1], args[0])
    if rule == "own-scale":
        return same(got[1], want[1], own_scale=True)
    if rule == "weights-and-state":
        return same_weights_and_state(got[1], want[1])
    if rule in ("training-steps", "training-loop"):
        return not training_difference(got[1], want[1], rule)
    if rule == "passed-on":
        return same(by_call(got[1]), by_call(want[1]))
    return same(got[1], want[1], activations=rule == "activations")


def same_at_logit_scale(got: Any, want: Any, logits: torch.Tensor) -> bool:
    """Probabilities made from `logits`: each row within RTOL plus the rounding of its
    largest logit (tolerances.logit_scale_rtol), the check's own bound."""
    if not (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)
            and got.shape == want.shape and got.dtype == want.dtype
            and isinstance(logits, torch.Tensor) and logits.shape == want.shape):
        return False
    g, e = got.double(), want.double()
    if not torch.equal(g.isnan(), e.isnan()) or not torch.equal(
            torch.where(g.isinf(), g, 0.0), torch.where(e.isinf(), e, 0.0)):
        return False  # nan where nan, and each infinity where it is
    error = torch.where(e.isfinite(), (g - e).abs(), 0.0)
    return bool((error <= ATOL + logit_scale_rtol(logits) * e.abs().nan_to_num(0.0)).all())


def by_call(callbacks: Any) -> Any:
    """A streamer's callbacks, (call, text) each, as the text each call passed on, calls
    that passed on nothing left out: two callbacks in one put() say what one with both
    texts says. Callbacks given anything but a str are judged as they are."""
    if not (isinstance(callbacks, list) and all(
            isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], str) for c in callbacks)):
        return callbacks
    texts: dict[int, str] = {}
    for when, text in callbacks:
        texts[when] = texts.get(when, "") + text
    return [(when, text) for when, text in texts.items() if text]


def same_filtering(got: Any, want: Any, logits: torch.Tensor) -> bool:
    """The stored filter's answer, or one that keeps other tokens of the same scores:
    each kept entry is its own logit, and every row keeps the same values."""
    if same(got, want):
        return True
    if not (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)
            and got.shape == want.shape == logits.shape and got.dtype == want.dtype
            and got.dim() > 0):
        return False
    kept = got.isfinite()
    if not torch.equal(got[kept], logits[kept]):
        return False
    rows = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
    return same(torch.sort(rows[0], dim=-1).values, torch.sort(rows[1], dim=-1).values)


def same_weights_and_state(got: Any, want: Any) -> bool:
    """An optimizer's step, (weights, *state): the weights within RTOL and ATOL, its
    state (averages of gradients, of their squares) at its own scale, since for tiny
    gradients those are far below any fixed absolute bound."""
    return (isinstance(want, tuple) and isinstance(got, tuple) and len(got) == len(want)
            and bool(want) and same(got[0], want[0])
            and all(same(g, w, own_scale=True) for g, w in zip(got[1:], want[1:])))


def same_rotation(got: Any, want: Any, args: tuple) -> bool:
    """The stored rotation of x = args[0], whose first position is args[1], within
    RTOL and ATOL plus the rounding of its largest angle at the vectors' size: right
    answers that compute the angles another way (in float64, from a table of cos and
    sin) differ by that much, more the further along they are."""
    x, start = args[0], int(args[1])
    last = start + (x.shape[-2] if isinstance(x, torch.Tensor) and x.dim() else 1) - 1
    return within(got, want, RTOL, RTOL + ANGLE_ULPS * (abs(last) + 1))


def within(got: Any, want: Any, rtol: float, per_size: float) -> bool:
    """Tensors of one shape and dtype, `got` within `rtol` of `want` and within ATOL
    plus `per_size` times the largest finite magnitude of `want`: a rotation's error
    grows with the vectors it turns."""
    if not (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)) or (
            got.shape != want.shape or got.dtype != want.dtype):
        return False
    finite = want.double()[want.isfinite()]
    size = float(finite.abs().max()) if finite.numel() else 0.0
    return bool(torch.allclose(got.double(), want.double(), rtol=rtol,
                               atol=ATOL + per_size * size, equal_nan=True))


def close(value: Any, want: float) -> bool:
    """A loss within RTOL and ATOL of the expected one, and a float as it is."""
    return isinstance(value, float) and abs(value - want) <= ATOL + RTOL * abs(want)


def training_difference(got: Any, want: Any, rule: str) -> str:
    """How a training run differs from the stored one, in a line; "" for none. Its losses
    (each a float, within RTOL and ATOL), its weights after the last step (within
    TRAINED_WEIGHTS_ATOL) and, for a loop ("training-loop"), its log of (step,
    train_loss, val_loss), how its forward passes ran (as many with gradients on, and
    in the same of the four modes: gradients on or off, training or evaluation), and
    where its losses or weights differ, the first step that ran at another learning
    rate, in their place."""
    size = 4 if rule == "training-loop" else 2
    if not (isinstance(got, tuple) and len(got) == size):
        return tr("the run handed back {value}", value=describe(got))
    losses, weights, *modes = got
    want_losses, want_weights, *want_modes = want
    if rule == "training-loop":
        if isinstance(losses, str):
            return tr("train_loop() returned {error}, not a list of (step, train_loss, "
                      "val_loss)", error=losses)
        for index, entry in enumerate(losses):
            if isinstance(entry, str) or len(entry) != 3:
                return tr("entry {index} of the log is {value}, not a tuple of 3",
                          index=index, value=describe(entry))
        steps = [entry[0] for entry in losses]
        if steps != [entry[0] for entry in want_losses]:
            return tr("the log has evaluations at steps {steps}, expected at {expected}",
                      steps=steps, expected=[entry[0] for entry in want_losses])
        on = modes[0]["grad, train"] + modes[0]["grad, eval"]
        want_on = want_modes[0]["grad, train"] + want_modes[0]["grad, eval"]
        if on != want_on:
            return tr("{count} forward passes ran with gradients on, expected {expected}",
                      count=on, expected=want_on)
        ran = sorted(k for k, n in modes[0].items() if n)
        want_ran = sorted(k for k, n in want_modes[0].items() if n)
        if ran != want_ran:
            return tr("the forward passes ran as {modes}, expected as {expected}",
                      modes=ran, expected=want_ran)
        difference = values_difference([v for entry in losses for v in entry[1:]],
                                       [v for entry in want_losses for v in entry[1:]],
                                       weights, want_weights)
        # A rate of the loop's own moves both, and is what to fix: the kata's judge
        # says it in the same words (schedule_rates.py).
        return (difference and first_other_rate(modes[1], want_modes[1])) or difference
    return values_difference(losses, want_losses, weights, want_weights)


def values_difference(losses: Any, want_losses: list[float], weights: Any,
                      want_weights: dict[str, torch.Tensor]) -> str:
    """How a run's losses and final weights differ from the stored ones; "" for none."""
    if not isinstance(losses, list) or len(losses) != len(want_losses):
        return tr("the losses are {losses}, expected {expected}", losses=describe(losses),
                  expected=describe(want_losses))
    for index, (value, wanted) in enumerate(zip(losses, want_losses)):
        if not isinstance(value, float):
            return tr("loss {n} of {count} is {value}, not a float", n=index + 1,
                      count=len(losses), value=describe(value))
        if not close(value, wanted):
            return tr("loss {n} of {count} is {value}, expected {expected}; the losses: "
                      "{losses}", n=index + 1, count=len(losses), value=repr(value),
                      expected=repr(wanted), losses=describe(losses))
    if not (isinstance(weights, dict) and weights.keys() == want_weights.keys()):
        named = sorted(weights) if isinstance(weights, dict) else weights
        return tr("the weights are {weights}, expected {expected}", weights=describe(named),
                  expected=describe(sorted(want_weights)))
    for name, wanted in want_weights.items():
        value = weights[name]
        if not (isinstance(value, torch.Tensor) and value.shape == wanted.shape):
            return tr("the weights `{name}` are {value}, expected {expected}", name=name,
                      value=describe(value), expected=describe(wanted))
        error = float((value.double() - wanted.double()).abs().max()) if value.numel() else 0.0
        if not error <= TRAINED_WEIGHTS_ATOL:
            return tr("the losses are right, but after the last step the weights `{name}` "
                      "differ from the expected ones by up to {error:.2e} (more than the "
                      "{allowed:g} allowed)", name=name, error=error,
                      allowed=TRAINED_WEIGHTS_ATOL)
    return ""


def in_stored_dtypes(got: Any, want: Any, paths: list[list[Any]]) -> Any:
    """`got` with the float tensor at each of `paths` (indices and keys into the answer)
    cast to the stored answer's float dtype there: where the instructor's judge takes a
    float64 answer for a float32 one (the release asks it, see float_dtypes.py), so
    does the copy. Anything else stays as it is, to be judged as it is."""
    for path in paths:
        got = _cast_at(got, want, path)
    return got


def _cast_at(got: Any, want: Any, path: list[Any]) -> Any:
    if not path:
        if (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)
                and got.is_floating_point() and want.is_floating_point()):
            return got.to(want.dtype)
        return got
    key, rest = path[0], path[1:]
    if isinstance(got, (list, tuple)) and isinstance(want, (list, tuple)) and isinstance(
            key, int) and key < min(len(got), len(want)):
        items = list(got)
        items[key] = _cast_at(got[key], want[key], rest)
        return type(got)(items)
    if isinstance(got, dict) and isinstance(want, dict) and key in got and key in want:
        return {**got, key: _cast_at(got[key], want[key], rest)}
    return got


def changed_inputs(after: tuple, before: tuple, arg_names: list[str]) -> str:
    """The name of an argument the call changed in place, or ""."""
    for i, (a, b) in enumerate(zip(after, before)):
        if isinstance(b, torch.Generator):
            continue  # a generator's state is meant to change
        if isinstance(b, (torch.Tensor, list, dict)) and not _identical(a, b):
            return arg_names[i] if i < len(arg_names) else tr("argument {n}", n=i + 1)
    return ""


def input_returned(result: Any, args: tuple, arg_names: list[str]) -> str:
    """The name of an argument whose memory the result is (itself, or a view of it), or
    "": where the statement asks for a new tensor."""
    for i, given in enumerate(args):
        if same_memory(result, given):
            return arg_names[i] if i < len(arg_names) else tr("argument {n}", n=i + 1)
    return ""


def generator_elsewhere(args: tuple, left: dict[int, torch.Generator],
                        arg_names: list[str]) -> str:
    """The name of a generator the call left in another state than the reference's
    call leaves it in (`left`, by argument position), or ""."""
    for i, theirs in left.items():
        given = args[i]
        if not (isinstance(given, torch.Generator)
                and torch.equal(given.get_state(), theirs.get_state())):
            return arg_names[i] if i < len(arg_names) else tr("argument {n}", n=i + 1)
    return ""


def nan_as_zero(t: torch.Tensor) -> torch.Tensor:
    """`t` with nan as 0 and the infinities kept (nan_to_num's default would turn -inf
    into the dtype's lowest number, and a -inf overwritten by it would look kept)."""
    return t.nan_to_num(0.0, posinf=float("inf"), neginf=float("-inf"))


def _identical(a: Any, b: Any) -> bool:
    if isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and bool(torch.equal(nan_as_zero(a), nan_as_zero(b))
                         and torch.equal(a.isnan(), b.isnan())))
    if isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and len(a) == len(b)
                and all(_identical(x, y) for x, y in zip(a, b)))
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(
            _identical(a[k], b[k]) for k in b)
    return bool(a == b)


def describe(value: Any, values: bool = True) -> str:
    """A value as a failure shows it: a tensor by its dtype and shape (and its values,
    when few and `values`)."""
    if isinstance(value, torch.Tensor):
        text = tr("{dtype} tensor of shape {shape}", dtype=str(value.dtype).removeprefix(
            "torch."), shape=tuple(value.shape))
        if values and value.numel() <= 12:
            text += f": {value.tolist()}"
        return text
    if isinstance(value, (tuple, list)) and holds_tensors(value):
        # An answer of several tensors (AdamW's lists, the attention's (y, (k, v))) is
        # told by its parts, as the kata tells it, not by torch's repr of their numbers:
        # where they differ, difference() says.
        inner = ", ".join(describe(part, values=False) for part in value)
        text = f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
        return text if len(text) <= 300 else text[:297] + "..."
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def holds_tensors(value: Any) -> bool:
    """Whether a tuple or list holds a tensor, at any depth."""
    return isinstance(value, torch.Tensor) or (
        isinstance(value, (tuple, list)) and any(holds_tensors(part) for part in value))


def difference(got: Any, want: Any, path: str = "") -> str:
    """Where two tensors of one shape differ, as the kata's grade says it: the first
    entry that differs, with both values, and how many differ ("" when they do not
    compare so). In answers of several tensors, the first part that differs, by its
    place (`[1][0]`), and how. That `got` is no tensor where one is expected (a loss
    returned as loss.item() shows the expected number, and would read as right)."""
    if (isinstance(got, (tuple, list)) and isinstance(want, (tuple, list))
            and len(got) == len(want)):
        for i, (part, wanted) in enumerate(zip(got, want)):
            found = difference(part, wanted, f"{path}[{i}]")
            if found:
                return found
        return ""
    if path and isinstance(want, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return tr("; {path} is {kind}, {got}, expected {expected}", path=path,
                      kind=a_kind(type(got).__name__), got=describe(got),
                      expected=describe(want))
        if got.shape != want.shape:
            return tr("; {path} has shape {got}, expected {expected}", path=path,
                      got=tuple(got.shape), expected=tuple(want.shape))
    if isinstance(want, torch.Tensor) and not isinstance(got, torch.Tensor):
        return tr("; it is {actual}, not a tensor", actual=a_kind(type(got).__name__))
    if not (isinstance(got, torch.Tensor) and isinstance(want, torch.Tensor)
            and got.shape == want.shape and got.numel()):
        return ""
    both = torch.isnan(got) & torch.isnan(want)
    differs = ~((got == want) | both)
    if got.is_floating_point() and want.is_floating_point():
        close = torch.isclose(got.double(), want.double(), rtol=RTOL, atol=ATOL)
        differs &= ~close
    count = int(differs.sum())
    exact = ~((got == want) | both)
    if not count and got.is_floating_point() and bool(exact.any()):
        # Close by the tolerance every problem shares, wrong by the problem's own (28's
        # gradients of 1e-6): the largest difference is the one to see.
        differs, count = exact, int(exact.sum())
        error = torch.where(exact, (got.double() - want.double()).abs(), 0.0)
        where = tuple(int(i) for i in (error == error.max()).nonzero()[0])
    elif count:
        where = tuple(int(i) for i in differs.nonzero()[0])
    else:
        return ""
    shown = where if len(where) != 1 else f"({where[0]},)"
    # Six digits, as the kata's judges show a value: a float32's every digit tells nothing.
    values = {"got": entry(got[where].item()), "want": entry(want[where].item())}
    if path:
        return tr("; in {path}, entry {index} is {got}, expected {want} ({count} of {total} "
                  "entries differ)", path=path, index=shown, **values, count=count,
                  total=got.numel())
    return tr("; entry {index} is {got}, expected {want} ({count} of {total} entries differ)",
              index=shown, **values, count=count, total=got.numel())


def entry(value: Any) -> str:
    """A tensor's entry as a report shows it: a float to six significant digits."""
    return f"{value:.6g}" if isinstance(value, float) else repr(value)
