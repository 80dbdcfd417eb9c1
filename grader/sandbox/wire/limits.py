"""Every limit a submission runs under, in one object with its defaults.

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

