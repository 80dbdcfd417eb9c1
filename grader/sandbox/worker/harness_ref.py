"""How a call names a harness of grader/sandbox/worker/harnesses.py in place of a method.

A call to the worker names what to run as one string: a Solution method's name, or
"harness:<name>" for trusted code that drives the submission's module. That string
is made by `harness_ref` and read by `harness_name` only, both checking that the name
is one of the harnesses, so a misspelt harness fails where it is named, and nothing
else splits the string.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

_PREFIX = "harness:"


def _harness(name: str) -> Callable[..., Any]:
    """The harness called `name`; ValueError for any other name."""
    from grader.sandbox.worker import harnesses

    # Only the module's own public functions: not what it imports, its helpers or
    # its exception classes.
    found = getattr(harnesses, name, None) if not name.startswith("_") else None
    if not inspect.isfunction(found) or found.__module__ != harnesses.__name__:
        raise ValueError(f"grader/sandbox/worker/harnesses.py has no harness called {name!r}")
    return found


def harness_ref(name: str) -> str:
    """What a call names as its method to run the harness `name`."""
    _harness(name)
    return _PREFIX + name


def harness_name(method: str) -> str | None:
    """The harness a call's method names, or None for a method of the submission's."""
    if not method.startswith(_PREFIX):
        return None
    name = method[len(_PREFIX):]
    _harness(name)
    return name


# What each harness runs of the learner's, as their file names it: a message about a
# call says that, not the harness's own name.
DRIVES = {
    "greedy_with_fixed_logits": "greedy",
    "word_streamer": "WordStreamer",
    "train_steps": "train_step",
    "loss_backward": "loss",
    "adamw_update": "adamw_step",
    "clip_gradients": "clip_grad_norm",
    "train_loop_run": "train_loop",
}


def learners_name(method: str) -> str:
    """What a call runs, named as the learner's file names it: the method, or what the
    harness drives (its own name for a harness no grade judges)."""
    name = harness_name(method)
    return method if name is None else DRIVES.get(name, name)


def run_harness(name: str, module: Any, *args: Any, **kwargs: Any) -> Any:
    """The harness `name` driving `module`, the submission's or the reference's."""
    return _harness(name)(module, *args, **kwargs)


# -- what a harness returns, as the grader reads it back -----------------------------------
# A harness runs in the worker beside the submission, which can replace it (its module is
# in sys.modules there): what comes back is shaped like its result only if the code left
# it alone, and the judges unpack it. So the grader checks a result's shape before any
# judge reads it. The notation: ANY, whatever the learner's code gave (the judges read it
# as an answer); a type, an instance of it (a bool is no int); TENSOR, a tensor; None;
# OneOf(...), any of them; [s], a list or tuple of items each s; (s, t), a tuple of exactly
# these; {type: s}, a dict of such keys and values; {"name": s, ...}, a dict of exactly
# these keys; WEIGHTS, tensors by name, among them every one the reference's result has
# there, in its shape and of float dtype where it is, when the reference's is at hand.
ANY, TENSOR, WEIGHTS = "any", "tensor", "weights"


class OneOf(tuple):
    """Any one of the shapes it holds."""


_MODES = {mode: int for mode in ("grad, train", "grad, eval", "no grad, train",
                                 "no grad, eval")}
RESULTS: dict[str, Any] = {
    "greedy_with_fixed_logits": ANY,
    "adamw_update": ANY,
    "word_streamer": [(int, ANY)],
    "train_steps": ([ANY], WEIGHTS),
    "loss_backward": (ANY, OneOf((TENSOR, None))),
    "clip_gradients": (ANY, [OneOf((TENSOR, None))]),
    "train_loop_run": (OneOf((str, [OneOf((str, [ANY]))])), WEIGHTS, _MODES, [[float]]),
}


def harness_result_fits(name: str, value: Any, reference: Any) -> bool:
    """Whether `value`, the worker's result of the harness `name`, has the shape the
    harness gives it (`reference`: the reference's result of the same call, or None).
    A harness the grade does not judge (gpt-kata train's, talk's) fits anything."""
    return _fits(value, RESULTS.get(name, ANY), reference)


def _fits(value: Any, shape: Any, reference: Any) -> bool:
    import torch

    if isinstance(shape, str):
        if shape == TENSOR:
            return isinstance(value, torch.Tensor)
        if shape == WEIGHTS:  # with no reference's at hand, any names
            mine = isinstance(value, dict) and all(
                isinstance(k, str) and isinstance(t, torch.Tensor) for k, t in value.items())
            return mine and (not isinstance(reference, dict) or all(
                k in value and value[k].shape == t.shape
                and value[k].is_floating_point() == t.is_floating_point()
                for k, t in reference.items()))
        return True  # ANY
    if shape is None:
        return value is None
    if isinstance(shape, OneOf):
        return any(_fits(value, one, reference) for one in shape)
    if isinstance(shape, type):
        return isinstance(value, shape) and not (isinstance(value, bool) and shape is not bool)
    if isinstance(shape, list):
        return isinstance(value, (list, tuple)) and all(_fits(v, shape[0], None) for v in value)
    if isinstance(shape, tuple):
        theirs = reference if isinstance(reference, tuple) else (None,) * len(shape)
        return (isinstance(value, tuple) and len(value) == len(shape) == len(theirs)
                and all(_fits(v, s, r) for v, s, r in zip(value, shape, theirs)))
    (key, item), *_ = shape.items()
    if isinstance(key, type):
        return isinstance(value, dict) and all(_fits(k, key, None) and _fits(v, item, None)
                                               for k, v in value.items())
    return (isinstance(value, dict) and value.keys() == shape.keys()
            and all(_fits(value[k], shape[k], None) for k in shape))
