"""Checks for problem 6, generate: the whole sampling loop."""

from __future__ import annotations

from grader.grading.cases import generation_cases
from grader.grading.contract import Contract
from grader.grading.mistakes import generation_loop
from grader.grading.mistakes_data import mistakes_of
from grader.grading.sampling_judges import judge_reset_sampling
from grader.grading.strategies import generation_example

MISTAKES = mistakes_of(globals(), generation_loop)


CONTRACT = Contract(cases=generation_cases, judge=judge_reset_sampling, mistakes=MISTAKES)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt on the shipped model",
    "The text on small random models of other sizes, against the reference",
    generation_example)
