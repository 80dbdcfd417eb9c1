"""A fixed set of drawn examples for the learners' copy, drawn as the checks draw them.

Each check module's example test draws its arguments with a function of its own
(`Contract.example_test(description, draw)`); the release finds that function in
the test and draws a few examples with it, from hypothesis's fixed derandomised
seed and never from the instructor's (grader/grading/subject/strategies.py's
SEED_VARIABLE), so the copy is the same wherever it is built, and the
instructor's grade, given a seed, draws other examples than the copy holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

EXAMPLES = 3  # drawn examples stored per problem: a few, the fixed cases carry the rest
ATTEMPTS = 12  # draws tried, of which the EXAMPLES that show the most mistakes are kept

T = TypeVar("T")

# Not the grading settings: those take the instructor's seed when it is set.
DRAWING = settings(derandomize=True, database=None, deadline=None, max_examples=ATTEMPTS,
                   phases=[Phase.generate], suppress_health_check=list(HealthCheck),
                   print_blob=False)


def draw_functions(module: ModuleType, contract: Any) -> list[Callable[[Any], tuple]]:
    """The draw of each example test of `contract` judged by the contract's own judge
    (a test with a judge of its own asks for more than an answer to compare)."""
    from grader.grading.contracts.contract import drawings

    return [drawing.draw for drawing in drawings(module, contract) if drawing.judge is None]


def drawn_examples(module: ModuleType, contract: Any) -> list[tuple]:
    """Up to ATTEMPTS different drawn arguments, the same on every run."""
    examples: list[tuple] = []
    seen: set[str] = set()
    # Hypothesis' constants of the loaded modules are off in every process that
    # imports the checks (grader/grading/subject/strategies.py), so what was imported
    # before, or how the grader is installed, changes nothing here.
    for draw in draw_functions(module, contract):
        collector(draw, examples, seen)()
    return examples


def collector(draw: Callable[[Any], tuple], examples: list[tuple],
              seen: set[str]) -> Callable[[], None]:
    @DRAWING
    @given(data=st.data())
    def collect(data: st.DataObject) -> None:
        args = draw(data)
        key = json.dumps(repr(args))
        if key not in seen:
            seen.add(key)
            examples.append(args)

    return collect


def most_telling(candidates: list[T], mistakes_of: Callable[[T], list[dict[str, Any]]],
                 ) -> list[T]:
    """Up to EXAMPLES of the candidates, chosen one at a time as the one whose stored
    mistakes (those answering otherwise than right there) add the most not yet shown,
    then that shows the most in all, the earlier on a tie: hypothesis draws its
    simplest examples first (an empty generation, a context of one token), which no
    mistake of a loop or a window can fail, so that the first few alone let a
    learner's copy pass what the kata fails. An example that many known mistakes fail
    is likelier to catch an unknown one too."""
    shown: set[str] = set()
    left = list(candidates)
    chosen: list[T] = []
    while left and len(chosen) < EXAMPLES:
        ids = [{m["id"] for m in mistakes_of(c)} for c in left]
        scores = [(len(each - shown), len(each)) for each in ids]
        best = scores.index(max(scores))
        chosen.append(left.pop(best))
        shown |= {m["id"] for m in mistakes_of(chosen[-1])}
    return chosen
