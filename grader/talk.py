"""`gpt-kata talk`: the shipped model continues a prompt, through the learner's code.

The learner's answer is used when its last grade passed (for the file as it is
now); otherwise the reference is, and the output says which.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from grader.cli import EXIT_FAIL, EXIT_PASS, UsageError, learner_status
from grader.registry import Problem, find


class Implementation:
    """A problem's answer, the learner's (run in a worker) or the reference (run here)."""

    def __init__(self, problem: Problem, use_learner: bool) -> None:
        self.problem = problem
        self.use_learner = use_learner
        self._process: Any = None
        self._reference: Any = None

    @property
    def label(self) -> str:
        whose = "your" if self.use_learner else "the reference"
        return f"{whose} {self.problem.methods[0]}() from {self.problem.folder}"

    def call(self, method: str, *args: Any, iterate: bool = False) -> Any:
        if self.use_learner:
            from grader.checkkit import one_line
            from grader.sandbox import SubmissionProcess

            if self._process is None:
                self._process = SubmissionProcess(str(self.problem.starter), "Solution",
                                                  list(self.problem.methods))
            outcome = self._process.call(method, args, iterate=iterate)
            if outcome.error:
                raise RuntimeError(one_line(outcome.error))
            return outcome.result
        if self._reference is None:
            from grader.checkkit import load_reference

            self._reference = load_reference(self.problem)
        from grader.checkkit import materialise

        result = getattr(self._reference, method)(*[materialise(a) for a in args])
        return list(result) if iterate else result

    def close(self) -> None:
        if self._process is not None:
            self._process.close()


def choose(slug: str, regrade: Callable[[Problem], None]) -> Implementation:
    problem = find(slug)
    if learner_status(problem) == "not graded":
        regrade(problem)
    return Implementation(problem, learner_status(problem) == "pass")


def regrade_quietly(problem: Problem) -> None:
    from grader.cli import build_parser, grade

    print(f"(grading your {problem.folder} first...)", file=sys.stderr)
    grade(build_parser().parse_args(["grade", problem.slug, "-q"]))


def talk(args: argparse.Namespace) -> int:
    import torch

    from grader import artifacts
    from grader.cases import SHIPPED

    torch.set_num_threads(1)
    int_to_char = artifacts.shipped_vocab()
    try:
        context = artifacts.encode(args.prompt, int_to_char)
    except ValueError as exc:
        raise UsageError(f"{exc}; the model knows only {''.join(int_to_char.values())!r}") \
            from None
    if context.shape[1] == 0:
        raise UsageError("give a prompt of at least one character")
    if args.chars < 0:
        raise UsageError("--chars must be 0 or more")
    context_length = artifacts.load_config().context_length
    implementation = choose("generate", regrade_quietly)
    print(f"[{implementation.label}]", file=sys.stderr)
    sys.stdout.write(args.prompt)
    sys.stdout.flush()
    try:
        # generate() resets its generator every step, so one character at a time
        # gives exactly the text a single long call would, and shows it as it comes.
        for _ in range(args.chars):
            char = implementation.call("generate", SHIPPED, 1, context, context_length,
                                       int_to_char)
            if not isinstance(char, str) or len(char) != 1:
                raise RuntimeError(f"generate(new_chars=1) returned {char!r}, not one character")
            sys.stdout.write(char)
            sys.stdout.flush()
            context = torch.cat([context, artifacts.encode(char, int_to_char)], dim=1)
            context = context[:, -context_length:]
    except RuntimeError as exc:
        print(f"\n{implementation.label} failed: {exc}", file=sys.stderr)
        return EXIT_FAIL
    finally:
        implementation.close()
    sys.stdout.write("\n")
    return EXIT_PASS
