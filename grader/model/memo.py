"""Remember a read-only model's outputs.

Grading runs the reference, the known mistakes and the witnessed calls on the
same few models, and many of those calls repeat an earlier input exactly: the
same prompt's first steps, in check after check (about half of a grade of all
sixteen references), and the same examples again while hypothesis shrinks a
failing one, on both sides of the pipe. A model whose weights never change gives the same
logits for the same token ids, so the second time they are looked up.

A memo is one model instance's own. The witness serves a submission's calls
from an instance of its own (grader/sandbox/host/witness.py): were it the one the
reference runs on, how fast the witness answered would tell the submission
which windows the reference had just read.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections import OrderedDict
from collections.abc import Callable

import torch
from torch.nn.modules import module as nn_module

from grader.model.gpt import GPT
from grader.model.kept_passes import ATTRIBUTES as KEPT_ATTRIBUTES
from grader.model.llama import Llama

# Bounded, so that however many distinct inputs a submission's witnessed calls
# send, the grader's memory stays small (40 million floats, 160 MB, at most).
MAX_ELEMENTS = 40_000_000


Lookup = Callable[[tuple], "torch.Tensor | None"]
# What remember_outputs sets on a model instance.
ATTRIBUTES = ("forward", "forget_outputs", "remembered", "remembered_entries",
              "weights_known", "weights_as_known", "_remembers")
# The grader's own models keep nothing a pass makes (gpt.causal_mask makes its masks
# outside inference mode), so their passes run in inference mode, without autograd's
# bookkeeping: a passing grade of generate took 6% less time. A learner's model may
# keep a tensor made in a pass (a mask, a cache), which autograd could not use after
# inference mode: theirs run as they are.
INFERENCE_SAFE = (GPT, Llama)


def copy_without_memo(model: GPT) -> GPT:
    """A deep copy of `model` with none of its memo, nor any lookup of kept passes
    (grader/model/kept_passes.py): a copy's memo functions would still be the
    original's, reading and filling the original's outputs and running its weights."""
    clone = copy.deepcopy(model)
    for name in (*ATTRIBUTES, *KEPT_ATTRIBUTES):
        clone.__dict__.pop(name, None)
    return clone


class KnownWeights:
    """A model's weights as they were known (`note`), and whether it still holds them
    (`held`): the same submodules and tensors by identity, no forward hooks, and the
    same dtypes, shapes and values, bit for bit. Values, not version counters: a write
    through `.data` (`p.data.zero_()`, `p.data = ...`) moves no parameter's version.

    A guarded memo asks before each lookup, so each pass a learner's code makes in its
    worker pays for it. Their bytes are compared in one list comparison: 0.1 ms on the
    shipped GPT, where a torch.equal per tensor took 0.17 ms (its call costs more than
    its 4,000 floats). Bit for bit, a NaN equals itself and -0.0 differs from 0.0: either
    way the verdict can only send a pass to be computed. A dtype numpy lacks
    (bfloat16) is compared with torch.equal."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.modules = list(model.modules())
        self.note()

    def _tensors(self) -> list[torch.Tensor]:
        return [v for m in self.modules
                for v in (*m._parameters.values(), *m._buffers.values()) if v is not None]

    def _identity(self, tensors: list[torch.Tensor]) -> tuple:
        return (tuple(id(v) for m in self.modules for v in m._modules.values()),
                tuple(map(id, tensors)))

    @staticmethod
    def _bytes(tensors: list[torch.Tensor]) -> list[tuple]:
        """Each tensor's dtype, shape and bytes; a TypeError or RuntimeError for a
        dtype numpy lacks or a tensor off the CPU."""
        try:  # numpy() reads no tensor that requires grad: the worker's do not
            return [(t.dtype, t.shape, t.numpy().tobytes()) for t in tensors]
        except RuntimeError:
            return [(t.dtype, t.shape, t.data.numpy().tobytes()) for t in tensors]

    def note(self) -> None:
        tensors = self._tensors()
        self.identity = self._identity(tensors)
        self.same: Callable[[list[torch.Tensor]], bool]
        try:
            values = self._bytes(tensors)
        except (TypeError, RuntimeError):
            copies = [t.data.clone() for t in tensors]
            self.same = lambda now: all(
                (t := n.data).dtype == was.dtype and t.shape == was.shape
                and torch.equal(t, was) for n, was in zip(now, copies))
        else:
            self.same = lambda now: self._same_bytes(now, values)

    def _same_bytes(self, tensors: list[torch.Tensor], values: list[tuple]) -> bool:
        try:
            return self._bytes(tensors) == values
        except (TypeError, RuntimeError):
            return False  # now of a dtype or on a device numpy does not read

    def held(self) -> bool:
        if any(m._forward_hooks or m._forward_pre_hooks for m in self.modules) or (
                nn_module._global_forward_hooks or nn_module._global_forward_pre_hooks):
            return False  # a hook would run in a pass, and see or change what it gives
        tensors = self._tensors()
        return self._identity(tensors) == self.identity and self.same(tensors)


def remember_outputs(model: GPT, max_elements: int | None = None,
                     also: Lookup | None = None, guarded: bool = False) -> GPT:
    """Make `model(context)` look up contexts it has seen; returns the same model.

    Only for models nothing writes to. Outputs are handed out as copies, since a
    caller may change its logits in place (a copy made outside inference mode is an
    ordinary tensor, whatever mode made the output). At most `max_elements` floats are
    held (MAX_ELEMENTS if not given); the least recently used go first.
    `model.remembered(key)` looks one up without computing it, and
    `model.remembered_entries()` gives them all; `also`, if given,
    is asked for a context this memo lacks (another instance's `remembered`, of
    a model with the same weights), one way only.

    `guarded`: for a model other code may write to (a learner's, in a worker),
    nothing is looked up while its weights differ from those of the last
    `model.weights_known()` (see KnownWeights): code that changed them, even to
    put them back after a pass, gets passes of the weights as they are, never the
    memo's.
    """
    if getattr(model, "_remembers", False):
        return model
    compute: Callable[[torch.Tensor], torch.Tensor] = model.forward
    inference = type(model) in INFERENCE_SAFE
    seen: OrderedDict[tuple, torch.Tensor] = OrderedDict()
    held, limit = 0, MAX_ELEMENTS if max_elements is None else max_elements
    # A model may be read by more than one thread (a trained run, say, by the
    # witness's thread and by talk's).
    lock = threading.Lock()
    known = KnownWeights(model) if guarded else None
    # Listed once: model.parameters() walks every submodule, which cost a learner's
    # worker 0.2 ms a pass. A parameter put in place of one of these is a new identity,
    # which a guarded memo's KnownWeights sees before anything is looked up.
    parameters = list(model.parameters())

    def forward(context: torch.Tensor) -> torch.Tensor:
        nonlocal held
        if ((torch.is_grad_enabled() and any(p.requires_grad for p in parameters))
                or not isinstance(context, torch.Tensor) or context.dtype != torch.long
                or context.device.type != "cpu"):
            return compute(context)  # an autograd graph, or an input the model refuses
        if known is not None and not known.held():
            return compute(context)  # weights changed since they were known
        key = (tuple(context.shape), context.contiguous().numpy().tobytes())
        with lock:
            found = seen.get(key)
            if found is not None:
                seen.move_to_end(key)
        if found is None:
            found = also(key) if also is not None else None
            if found is None:
                # inference_mode(False) would turn gradients on: a learner's pass
                # runs in the caller's own mode instead.
                with torch.inference_mode() if inference else contextlib.nullcontext():
                    found = compute(context).detach()
            with lock:
                if key not in seen:
                    seen[key] = found
                    held += found.numel()
                while held > limit and seen:
                    held -= seen.popitem(last=False)[1].numel()
        return found.clone()

    def remembered(key: tuple) -> torch.Tensor | None:
        with lock:
            return seen.get(key)

    def weights_known() -> None:
        if known is not None:
            known.note()

    def weights_as_known() -> bool:
        return known is not None and known.held()

    def entries() -> dict[tuple, torch.Tensor]:
        with lock:
            return dict(seen)

    def forget() -> None:
        nonlocal held
        with lock:
            seen.clear()
            held = 0

    model.forward = forward  # type: ignore[method-assign]
    model.forget_outputs = forget  # after its weights were changed, and put back
    model.remembered = remembered
    model.remembered_entries = entries  # what grader/model/forward_store.py keeps
    model.weights_known = weights_known  # for a `guarded` memo: its weights are as built
    model.weights_as_known = weights_as_known  # a `guarded` memo's: still as last known
    model._remembers = True
    return model
