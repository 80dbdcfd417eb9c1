"""torch.manual_seed as the grader's own process runs it while the checks run."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def cpu_seeding_only() -> Iterator[None]:
    """While the checks run, torch.manual_seed here seeds the CPU's generator alone.

    The references, and the known mistakes run here, seed as the statements ask, with
    torch.manual_seed, which seeds every accelerator's generator too. With none of them
    initialised, it queues each seed with the caller's whole stack formatted, once for
    CUDA, XPU and MTIA: under pytest and hypothesis, 3.7 ms a call, a third of what the
    generate reference takes. This process computes on the CPU alone, and no learner
    code runs in it (a worker keeps torch as it is), so the CPU's seed is all a call
    here can use. The generator handed back is the same object torch.manual_seed gives.
    """
    original = torch.manual_seed

    def manual_seed(seed: int) -> torch.Generator:
        return torch.default_generator.manual_seed(int(seed))

    torch.manual_seed = manual_seed  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.manual_seed = original
