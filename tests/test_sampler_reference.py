"""The reference on a hand-made model whose logits never change, so each step is known."""

from __future__ import annotations

import math

import torch
from conftest import reference_solution

VOCAB = {0: "a", 1: "b", 2: "c"}


def reference():
    return reference_solution("16-sampler")


class Constant(torch.nn.Module):
    """The same next-token logits after any context."""

    def __init__(self, logits: list[float]) -> None:
        super().__init__()
        self.logits = torch.tensor(logits)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        assert context.shape[1] <= 4, "the window was not cropped"
        return self.logits.expand(1, context.shape[1], len(self.logits)).clone()


def sample(logits, max_new_tokens=5, prompt=(0,), **settings):
    return reference().sample_text(Constant(logits), torch.tensor([list(prompt)]),
                                   max_new_tokens, 4, VOCAB, **settings)


def test_greedy_always_takes_the_largest_logit() -> None:
    assert sample([1.0, 3.0, 2.0], temperature=0) == "bbbbb"


def test_greedy_ties_go_to_the_first_index() -> None:
    assert sample([3.0, 3.0, 2.0], temperature=0) == "aaaaa"


def test_greedy_with_unigram_ban_stops_when_everything_is_used() -> None:
    # The prompt holds 'a'; then 'b' (best allowed), then 'c'; then nothing is left.
    assert sample([1.0, 3.0, 2.0], temperature=0, no_repeat_ngram_size=1) == "bc"


def test_ban_looks_at_the_whole_prompt_not_only_the_window() -> None:
    # The window is 4 tokens, but the bigram "a b" at the very start of the
    # 6-token prompt still bans 'b' after the final 'a': greedy takes 'c'.
    prompt = (0, 1, 2, 2, 2, 0)
    assert sample([1.0, 3.0, 2.0], 1, prompt, temperature=0, no_repeat_ngram_size=2) == "c"


def test_eos_stops_without_being_added() -> None:
    assert sample([1.0, 3.0, 2.0], temperature=0, eos_id=1) == ""
    assert sample([1.0, 3.0, 2.0], temperature=0, eos_id=2) == "bbbbb"


def test_top_k_1_and_top_p_0_leave_only_the_most_likely() -> None:
    for seed in range(3):
        assert sample([1.0, 3.0, 2.0], 8, top_k=1, seed=seed) == "bbbbbbbb"
        assert sample([1.0, 3.0, 2.0], 8, top_p=0.0, seed=seed) == "bbbbbbbb"


def test_temperature_comes_before_top_p() -> None:
    # Probabilities 1/4 and 3/4 at temperature 1: the cumulative sums are 0.25 and 1,
    # and top_p = 0.6 removes the first (0.25 <= 0.4). At temperature 1000 they
    # are about 1/2 each, 0.5 > 0.4, and both stay: 'a' shows up.
    logits = [0.0, math.log(3.0), -1e9]
    assert sample(logits, 30, top_p=0.6) == "b" * 30
    assert "a" in sample(logits, 30, top_p=0.6, temperature=1000.0)


def test_the_generator_is_seeded_once_and_advances() -> None:
    # Two equally likely tokens: rewinding the generator would repeat one token.
    text = sample([0.0, 0.0, -1e9], 30, seed=4)
    assert set(text) == {"a", "b"}
    assert text == sample([0.0, 0.0, -1e9], 30, seed=4)
    assert text != sample([0.0, 0.0, -1e9], 30, seed=5)
