"""Checks for problem 4, sample: one draw with a reproducible generator."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_tensor
from grader.grading.subject.cases import shipped_logits
from grader.grading.subject.kata import Call
from grader.grading.subject.strategies import logits
from grader.grading.values.failures import Diagnosis, GradeFailure, Mistake, naming
from grader.locale import tr


def generator_args(probs: torch.Tensor, seed: int) -> tuple:
    generator = torch.Generator().manual_seed(seed)
    return (probs, generator, generator.get_state())


def shipped_probs(prompt: str) -> torch.Tensor:
    return torch.softmax(shipped_logits(prompt), dim=-1)


def cases() -> dict[str, tuple]:
    one_hot = torch.zeros(1, 40)
    one_hot[0, 7] = 1.0
    return {
        "after-a-prompt": generator_args(shipped_probs("Once upon a time, there was a"), 0),
        "word-boundary": generator_args(shipped_probs("The little fox saw the"), 0),
        "other-seed": generator_args(shipped_probs("Tom"), 1234),
        "uniform": generator_args(torch.full((1, 10), 0.1), 0),
        "certain": generator_args(one_hot, 0),
    }


def draw_example(data: st.DataObject) -> tuple:
    x = data.draw(logits(rows=1, max_vocab=30), label="logits")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    return generator_args(torch.softmax(x, dim=-1), seed)


# -- telling the ways of not using the generator apart ----------------------------------------
# One wrong draw cannot say whether the learner took the argmax or sampled from
# PyTorch's global random state: on probabilities (0.5, 0.5), the smallest ones
# hypothesis finds, either gives token 0. So the diagnosis calls the learner's
# sample() again, on a probe: PROBE_SIZE nearly equal probabilities, the first a
# little larger. The argmax always answers 0; a draw from the global state
# answers something else, and something new each time; a draw with the
# generator answers the same for the same generator state.
PROBE_SIZE = 1000
PROBE_SEEDS = (1234, 4321)  # two seeds whose draws on the probe differ, neither token 0
ARGMAX = Mistake("take the most likely token (argmax) instead of sampling",
                 "sample with torch.multinomial(probs, 1, generator=generator)")
NOT_THE_GENERATOR = Mistake("do not draw with the generator you were given (torch.multinomial "
                            "without generator= draws from PyTorch's global random state)",
                            "pass the generator in: "
                            "torch.multinomial(probs, 1, generator=generator)")


def probe_probs() -> torch.Tensor:
    probs = torch.ones(1, PROBE_SIZE)
    probs[0, 0] = 1.01
    return probs / probs.sum()


def how_drawn(call: Call) -> Diagnosis | str:
    """The diagnosis of a wrong draw, from sample() called again on the probe."""
    if call.again is None:
        return ""
    probs = probe_probs()
    try:
        answers = []
        for seed in (PROBE_SEEDS[0], *PROBE_SEEDS):
            outcome = call.again(*generator_args(probs, seed))
            # Only a token id tells what was drawn (a float, nan say, is none).
            if outcome[0] != "value" or not isinstance(outcome[1], torch.Tensor) or (
                    outcome[1].numel() != 1 or outcome[1].is_floating_point()):
                return ""
            answers.append(int(outcome[1].flatten()[0]))
    except GradeFailure:
        return ""  # the probe itself went wrong: nothing to conclude from it
    first, again, other_seed = answers
    if answers == [0, 0, 0]:
        return naming(ARGMAX)
    reference = [int(torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(seed)))
                 for seed in PROBE_SEEDS]
    evidence = "\n" + tr("Called again on {size} nearly equal probabilities with generators "
                         "seeded {seed}, {seed} and {other_seed}, sample() drew tokens {first}, "
                         "{again} and {other}; drawing with the generator gives {reference}, "
                         "{reference} and {other_reference}", size=PROBE_SIZE,
                         seed=PROBE_SEEDS[0], other_seed=PROBE_SEEDS[1], first=first,
                         again=again, other=other_seed, reference=reference[0],
                         other_reference=reference[1])
    if first != again or (first == other_seed and reference[0] != reference[1]):
        # A different token for the same generator state, or the same token for
        # different states: what was drawn does not depend on the generator.
        return evidence + naming(NOT_THE_GENERATOR)
    return ""


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    probs, _, initial_state = call.args
    if isinstance(got, int) and not isinstance(got, bool):
        raise GradeFailure(tr("sample() returned a plain int, not a (1, 1) LongTensor."),
                           hint=tr("return the tensor torch.multinomial gives, without .item()"))
    after = call.record.after.get(1) if call.record.after else None
    restored = after is not None and torch.equal(after.get_state(), initial_state)
    try:
        expect_tensor(got, expected, tr("the sampled token"), exact=True)
    except GradeFailure as failure:
        # The generator ends as it started both when it was used and restored and
        # when it was never used: only another call can tell which (how_drawn).
        raise GradeFailure(failure.message, lambda: how_drawn(call)) from None
    if not restored:
        raise GradeFailure(tr("the right token, but the generator was not put back to "
                              "initial_state after the draw, so the next draw will differ."),
                           hint=tr("call generator.set_state(initial_state) after "
                                   "torch.multinomial"))


CONTRACT = Contract(cases=cases, judge=judge)

test_fixed_distributions, test_random_distributions = CONTRACT.tests(
    "A draw from a fixed distribution, and the generator restored",
    "Draws from random distributions and seeds, against the reference",
    draw_example)
