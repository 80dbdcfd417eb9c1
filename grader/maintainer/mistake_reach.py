"""Which known mistakes a check's drawn examples alone never catch.

    python -m grader.maintainer.mistake_reach [SLUG ...] [--seed TEXT]

A problem's fixed cases are chosen to show each known mistake; its drawn test is the
second line, on inputs nobody chose. This draws each drawn test's examples as a grade
draws them (from the instructor's seed with `--seed`), runs the reference and every
known mistake on each, and lists the mistakes whose answer never differs from the
reference's: the draws never reach the inputs that show them. Checks of a module
problem, or driven by a harness, are passed over (their mistakes need the grader's
machinery around them).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any


def drawn(identity: str, draw: Callable[[Any], tuple]) -> list[tuple]:
    """The arguments a drawn test draws in a grade, in order (`Drawing`'s fields)."""
    from hypothesis import given
    from hypothesis import strategies as st

    from grader.grading.subject import strategies

    examples: list[tuple] = []

    def collect(data: st.DataObject) -> None:
        examples.append(draw(data))

    strategies.seeded(strategies.GRADING(given(data=st.data())(collect)), identity)()
    return examples


def never_caught(slug: str) -> tuple[int, list[str]] | None:
    """How many examples were drawn, and the mistakes none of them shows; None for a
    problem this cannot judge."""
    import torch

    from grader.grading.contracts.contract import drawings
    from grader.grading.subject.reference import fresh_args, load_reference
    from grader.grading.values.equality import outcome_of, same_outcome
    from grader.registry import find
    from grader.sandbox.worker.harness_ref import harness_name

    problem = find(slug)
    name = slug.replace("-", "_")
    module = importlib.import_module(f"grader.checks.{name}.check_{name}")
    contract = getattr(module, "CONTRACT", None)
    if (contract is None or not contract.mistakes or problem.module or contract.harness
            or harness_name(contract.method) is not None):
        return None
    method = getattr(load_reference(problem), contract.method)
    examples = [args for drawing in drawings(module, contract)
                for args in drawn(drawing.identity, drawing.draw)]
    shown: set[str] = set()
    with torch.no_grad():
        for args in examples:
            expected = outcome_of(method, *fresh_args(args))
            shown.update(mistake.name for mistake in contract.mistakes
                         if any(not same_outcome(expected, outcome_of(run, *fresh_args(args)))
                                for run in mistake.runs))
    return len(examples), [m.name for m in contract.mistakes if m.name not in shown]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="problems (default: every one)")
    parser.add_argument("--seed", default="", help="draw from this instructor's seed")
    args = parser.parse_args(argv)
    from grader.grading.subject.examples_seed import SEED_VARIABLE
    from grader.registry import problems

    os.environ[SEED_VARIABLE] = args.seed  # read as each check module is imported

    for slug in args.slugs or [p.slug for p in problems()]:
        result = never_caught(slug)
        if result is None:
            print(f"{slug}: passed over (a module problem, or driven by a harness)")
            continue
        count, missed = result
        print(f"{slug}: {count} drawn examples; never caught: "
              + ("none" if not missed else "; ".join(missed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
