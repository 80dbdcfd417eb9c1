"""Every limit a submission runs under, in one object with its defaults, and the
seed its code starts from on every path.

Built once from a command's options (`grader.learner.options.limits_from`) and passed
down whole: the grading session and each `SubmissionProcess` read the time limits
from it, and a pool given it (as its `sandbox`) the limits of each worker's tree.
"""

from __future__ import annotations

from dataclasses import dataclass

MB = 1 << 20
DEFAULT_CALL_TIMEOUT = 20.0  # seconds of wall-clock time for one call of the learner's code
DEFAULT_PROBLEM_BUDGET = 120.0  # seconds, all calls of one problem's checks together
DEFAULT_MEMORY_MB = 1024
DEFAULT_SCRATCH_MB = 64


@dataclass(frozen=True)
class Limits:
    """The limits of one grade: per call, per problem, memory, CPU and scratch."""

    call_timeout: float = DEFAULT_CALL_TIMEOUT
    problem_budget: float = DEFAULT_PROBLEM_BUDGET
    memory_bytes: int = DEFAULT_MEMORY_MB * MB  # above what the worker holds at start
    # CPU seconds of one worker; None keeps the policy's own limit, the one grading uses.
    cpu_seconds: int | None = None
    # The size of the worker's scratch folder (a tmpfs of its own, where it can have one).
    scratch_bytes: int | None = DEFAULT_SCRATCH_MB * MB


DEFAULTS = Limits()  # the limits of a grade whose options leave them as they are



# The seed of torch's and Python's global generators as a submission is loaded, by the
# kata's worker and the learners' copy alike, for draws it makes from them where it
# should use the generator it was handed: unseeded, they differed from process to
# process, and one sampler that forgot `generator=` scored 8, 5 and 7 of 10 on three
# runs. Above every seed a check fixes or draws (0 to 2**32 - 1), so that such draws
# never equal the handed generator's. Once a load, not once a call: a dropout left
# active must still draw another mask when called again.
GLOBAL_SEED = 2**32 + 0x5EED


def reseed_global_generators() -> None:
    """The same global draws on every run and every path, from the same calls."""
    import random

    import torch

    torch.manual_seed(GLOBAL_SEED)
    random.seed(GLOBAL_SEED)
