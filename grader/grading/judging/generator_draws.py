"""Whether a wrong draw was drawn with the generator it was given, from more draws.

One wrong draw cannot say whether the learner took the argmax or sampled from
PyTorch's global random state: on probabilities (0.5, 0.5), the smallest ones
hypothesis finds, either gives token 0. So the diagnosis calls the learner's
sample() again, on a probe: PROBE_SIZE nearly equal probabilities, the first a
little larger. The argmax always answers 0; a draw from the global state
answers something else, and something new each time; a draw with the
generator answers the same for the same generator state.

Problem 04's check asks again through the worker, and a learners' copy, which
stores no answer of the global state's, calls the learner's code itself: both
name the mistake by how_drawn, so they say the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from grader.grading.values.failures import Diagnosis, GradeFailure, Mistake, naming
from grader.locale import tr

PROBE_SIZE = 1000
PROBE_SEEDS = (1234, 4321)  # two seeds whose draws on the probe differ, neither token 0
# On lines of their own, as answers.without_fixes finds them: a graded class's copy
# leaves them out.
ARGMAX_FIX = "sample with torch.multinomial(probs, 1, generator=generator)"
NOT_THE_GENERATOR_FIX = "pass the generator in: torch.multinomial(probs, 1, generator=generator)"
ARGMAX = Mistake("take the most likely token (argmax) instead of sampling", ARGMAX_FIX)
NOT_THE_GENERATOR = Mistake("do not draw with the generator you were given (torch.multinomial "
                            "without generator= draws from PyTorch's global random state)",
                            NOT_THE_GENERATOR_FIX)


def generator_args(probs: torch.Tensor, seed: int) -> tuple:
    """sample()'s arguments: `probs`, a generator seeded with `seed`, and its state."""
    seeded = torch.Generator().manual_seed(seed)  # a check's own words, not the answer's
    return (probs, seeded, seeded.get_state())


def probe_probs() -> torch.Tensor:
    probs = torch.ones(1, PROBE_SIZE)
    probs[0, 0] = 1.01
    return probs / probs.sum()


def how_drawn(again: Callable[..., tuple[str, Any]]) -> Diagnosis | str:
    """The diagnosis of a wrong draw, from sample() called again on the probe: `again`
    takes sample()'s arguments and gives its outcome, ("value", answer) or ("error",
    what it raised); it may raise GradeFailure where the call went wrong."""
    probs = probe_probs()
    try:
        answers = []
        # The first seed three times: a draw from PyTorch's global state repeats itself
        # on the probe's 1,000 tokens one time in a thousand for two draws (seen: 1 in
        # 3,000 unnamed), one in a million for three.
        for seed in (PROBE_SEEDS[0], PROBE_SEEDS[0], *PROBE_SEEDS):
            outcome = again(*generator_args(probs, seed))
            # Only a token id tells what was drawn (a float, nan say, is none).
            if outcome[0] != "value" or not isinstance(outcome[1], torch.Tensor) or (
                    outcome[1].numel() != 1 or outcome[1].is_floating_point()):
                return ""
            answers.append(int(outcome[1].flatten()[0]))
    except GradeFailure:
        return ""  # the probe itself went wrong: nothing to conclude from it
    first, *repeats, other_seed = answers
    again_drawn = next((answer for answer in repeats if answer != first), repeats[-1])
    if answers == [0, 0, 0, 0]:
        return naming(ARGMAX)
    reference = [int(torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(seed)))
                 for seed in PROBE_SEEDS]
    evidence = "\n" + tr("Called again on {size} nearly equal probabilities with generators "
                         "seeded {seed}, {seed} and {other_seed}, sample() drew tokens {first}, "
                         "{again} and {other}; drawing with the generator gives {reference}, "
                         "{reference} and {other_reference}", size=PROBE_SIZE,
                         seed=PROBE_SEEDS[0], other_seed=PROBE_SEEDS[1], first=first,
                         again=again_drawn, other=other_seed, reference=reference[0],
                         other_reference=reference[1])
    if first != again_drawn or (first == other_seed and reference[0] != reference[1]):
        # A different token for the same generator state, or the same token for
        # different states: what was drawn does not depend on the generator.
        return evidence + naming(NOT_THE_GENERATOR)
    return ""
