"""Checks for problem 6, generate: the whole sampling loop."""

from __future__ import annotations

from grader.grading.contracts.contract import Contract
from grader.grading.judging.generated_text import judge_reset_sampling
from grader.grading.subject.cases import generation_cases, other_window_cases
from grader.grading.subject.mistakes import generation_loop
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import generation_example

MISTAKES = mistakes_of(globals(), generation_loop)


CONTRACT = Contract(cases=generation_cases, judge=judge_reset_sampling, mistakes=MISTAKES,
                    tell_apart_on_cases=True, telling=other_window_cases)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt on the shipped model",
    "The text on small random models of other sizes, against the reference",
    generation_example)

# A learners' copy judges the calls its exported model saw with new_chars=0 by the same
# rule (grader/release/build.py's CALL_RULES).
PRACTICE_CALLS = "no-calls-for-no-text"
