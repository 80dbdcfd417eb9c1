"""The global state a submission can change, kept so that the next one starts from it.

Off Linux there is no fork server: one spawned worker imports torch once and loads
each problem's submission in turn (`grader.sandbox.host.handles.HostedWorker`). Before
each load the worker puts back what the previous submission may have changed, so
that it cannot change another problem's grade: torch's global settings and random
state, Python's random state, modules it imported, sys.path, the working folder,
the environment, warnings filters, and the attributes of the modules whose
functions a submission might replace (torch.softmax = ...).

A worker that crashed or ran out of time is never reused (it is replaced, as every
worker is), nor one in which a thread a submission started still runs (`threads_left`),
so only what a submission leaves behind after answering is undone here.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import os
import random
import signal
import sys
import sysconfig
import threading
import types
import warnings
from dataclasses import dataclass
from typing import Any

# A stand-in for an attribute that did not exist when the baseline was taken.
_MISSING = object()


def _namespaces() -> list[Any]:
    """Objects whose attributes a submission could replace by accident or on purpose."""
    import torch
    import torch.nn.functional

    return [builtins, math, random, torch, torch.nn, torch.nn.functional, torch.Tensor,
            torch.nn.Module, torch.nn.Linear, torch.nn.Embedding, torch.nn.LayerNorm]


def _trusted_roots() -> tuple[str, ...]:
    """Folders whose modules stay loaded across submissions: the standard library,
    installed packages and the grader package itself (their state is covered above).
    Not the checkout around it, which holds the learner's problems/: a helper module
    one problem imported would be the next problem's, under the same name."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    here = os.path.abspath(__file__)  # grader/sandbox/worker/baseline.py
    roots.add(os.path.dirname(os.path.dirname(os.path.dirname(here))))
    return tuple(os.path.normcase(os.path.realpath(r)) + os.sep for r in roots)


def _is_trusted(module: Any, roots: tuple[str, ...]) -> bool:
    file = getattr(module, "__file__", None)
    if not isinstance(file, str):
        return True  # built in, or a namespace package: no learner code in it
    return os.path.normcase(os.path.realpath(file)).startswith(roots)


@dataclass
class Baseline:
    modules: frozenset[str]
    path: list[str]
    meta_path: list[Any]
    cwd: str
    environ: dict[str, str]
    warning_filters: list[Any]
    recursion_limit: int
    python_random: Any
    torch_random: Any
    dtype: Any
    device: Any
    grad: bool
    anomaly: bool
    threads: int
    deterministic: bool
    deterministic_warn_only: bool
    matmul_precision: str
    attributes: list[tuple[Any, dict[str, Any]]]
    # torch.nn's hooks on every module (register_module_forward_hook...), each dict
    # with what it held.
    module_hooks: list[tuple[dict, dict]]
    # Python's signal handlers, where Python set them (a submission's alarm would
    # end a later problem's run).
    handlers: dict[int, Any]
    # The threads running before any submission: one a submission starts cannot be
    # stopped, and goes on changing what is put back (threads_left).
    thread_idents: frozenset[int | None] = frozenset()


def capture() -> Baseline:
    """The state to come back to, taken once torch is imported and before any submission."""
    import torch

    return Baseline(
        modules=frozenset(sys.modules), path=list(sys.path), meta_path=list(sys.meta_path),
        cwd=os.getcwd(), environ=dict(os.environ), warning_filters=list(warnings.filters),
        recursion_limit=sys.getrecursionlimit(), python_random=random.getstate(),
        torch_random=torch.get_rng_state(), dtype=torch.get_default_dtype(),
        device=_default_device(),
        grad=torch.is_grad_enabled(),
        anomaly=torch.is_anomaly_enabled(), threads=torch.get_num_threads(),
        deterministic=torch.are_deterministic_algorithms_enabled(),
        deterministic_warn_only=torch.is_deterministic_algorithms_warn_only_enabled(),
        matmul_precision=torch.get_float32_matmul_precision(),
        attributes=[(space, dict(vars(space))) for space in _namespaces()],
        module_hooks=[(hooks, dict(hooks)) for hooks in _module_hooks()],
        handlers=_handlers(),
        thread_idents=frozenset(t.ident for t in threading.enumerate()),
    )


def threads_left(baseline: Baseline) -> bool:
    """Whether a thread a submission started is still running: the process can then not
    be put back for the next one (a thread that kept setting the default dtype to
    float64 failed a later problem's reference solution)."""
    return any(t.ident not in baseline.thread_idents and t.is_alive()
               for t in threading.enumerate())


def _default_device() -> Any:
    """The default device to put back: None for the CPU, which is the default with no
    device set. set_default_device(None) puts that back; set_default_device("cpu")
    would install a mode that every later torch call of every submission goes
    through (a grade's second problem on ran 1.7 times slower on small tensors). torch
    before 2.3 (Intel Macs stop at 2.2) has no get_default_device: its default is the CPU."""
    import torch

    device = getattr(torch, "get_default_device", lambda: None)()
    return None if device is None or torch.device(device).type == "cpu" else device


def _module_hooks() -> list[dict]:
    """torch.nn's global hooks and registration hooks: dicts that a register_*
    function fills in place."""
    from torch.nn.modules import module

    return [value for name, value in vars(module).items()
            if name.startswith("_global_") and isinstance(value, dict)]


def _handlers() -> dict[int, Any]:
    handlers = {}
    for number in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):
            handler = signal.getsignal(number)
            if handler is not None:  # not set from Python: nothing to put back
                handlers[number] = handler
    return handlers


def _restore_signals(baseline: Baseline) -> None:
    if hasattr(signal, "setitimer"):  # an alarm the submission armed never rings
        signal.setitimer(signal.ITIMER_REAL, 0)
    for number, handler in baseline.handlers.items():
        with contextlib.suppress(OSError, ValueError, TypeError):
            if signal.getsignal(number) is not handler:
                signal.signal(number, handler)


def _restore_attributes(space: Any, saved: dict[str, Any]) -> None:
    current = vars(space)
    for name in [n for n in current if n not in saved]:
        # Submodules imported since (torch.fx...) stay: their parent keeps them bound.
        if not isinstance(current[name], types.ModuleType):
            delattr(space, name)
    for name, value in saved.items():
        if current.get(name, _MISSING) is not value:
            setattr(space, name, value)


def restore(baseline: Baseline) -> None:
    """Put back everything `capture` saw, as far as a submission could have changed it."""
    import torch

    # The working folder first: the submission's may be gone by now, and finding a
    # module's real path reads the working folder (os.getcwd) on Python 3.10.
    os.chdir(baseline.cwd)
    roots = _trusted_roots()
    for name in [n for n in sys.modules if n not in baseline.modules]:
        if not _is_trusted(sys.modules[name], roots):
            del sys.modules[name]
    sys.modules.pop("submission", None)
    sys.path[:] = baseline.path
    sys.meta_path[:] = baseline.meta_path
    os.environ.clear()
    os.environ.update(baseline.environ)
    warnings.filters[:] = baseline.warning_filters
    mutated = getattr(warnings, "_filters_mutated", None)
    if mutated is not None:  # drops the decisions cached under the old filters
        mutated()
    sys.setrecursionlimit(baseline.recursion_limit)
    for space, saved in baseline.attributes:
        _restore_attributes(space, saved)
    random.setstate(baseline.python_random)
    torch.set_rng_state(baseline.torch_random)
    torch.set_default_dtype(baseline.dtype)
    torch.set_default_device(baseline.device)
    torch.set_grad_enabled(baseline.grad)
    torch.set_anomaly_enabled(baseline.anomaly)
    torch.set_num_threads(baseline.threads)
    torch.use_deterministic_algorithms(baseline.deterministic,
                                       warn_only=baseline.deterministic_warn_only)
    torch.set_float32_matmul_precision(baseline.matmul_precision)
    for hooks, saved in baseline.module_hooks:
        hooks.clear()
        hooks.update(saved)
    _restore_signals(baseline)
    if "numpy" in sys.modules:  # its global generator, if anything seeded it
        sys.modules["numpy"].random.seed(None)
