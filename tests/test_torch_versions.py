"""The grader's copy of torch.multinomial's draw holds on the torch installed.

Judges and the witness find the token torch.multinomial(probs, 1, generator=g)
picks from g's state alone: the argmax of probs over exponentials drawn from g.
That holds on every torch in pyproject.toml's range only if the exponentials are
drawn as multinomial draws them, in float32 and one call at a time (before
torch 2.7 float64 ones were other numbers, and draws came in blocks). CI runs
this on the lowest torch of each range.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks.sampler.check_sampler import exponentials_after
from grader.grading.judging.generated_text import exponentials, sampled_choice
from grader.grading.subject.cases import seed_state


def probabilities(size: int, seed: int) -> torch.Tensor:
    logits = torch.randn(size, generator=torch.Generator().manual_seed(seed)) * 3
    return torch.softmax(logits, dim=-1)  # float32, as a learner's softmax gives


@pytest.mark.parametrize("size", [7, 40, 65])
def test_the_pick_is_the_one_torch_multinomial_makes(size: int) -> None:
    for seed in range(200):
        probs = probabilities(size, seed)
        generator = torch.Generator().manual_seed(0)
        drawn = int(torch.multinomial(probs, 1, generator=generator))
        choice = sampled_choice(torch.softmax(probs.log().double(), dim=-1), seed_state(0))
        assert choice.best == drawn, (torch.__version__, size, seed)


@pytest.mark.parametrize("draws", [0, 1, 3, 25])
def test_the_exponentials_after_some_draws_are_those_of_the_next_draw(draws: int) -> None:
    size = 40
    generator = torch.Generator().manual_seed(0)
    for _ in range(draws):
        torch.multinomial(probabilities(size, 1), 1, generator=generator)
    assert torch.equal(exponentials_after(size, 0, draws),
                       exponentials(size, generator.get_state()))
