"""The greedy reference on stand-in models whose answers can be worked out by hand."""

from __future__ import annotations

import torch
from conftest import reference_solution

VOCAB = {0: "a", 1: "b", 2: "c"}


def reference():
    return reference_solution("07-greedy")


class Rule(torch.nn.Module):
    """A model whose most likely next token is rule(window), with a logit margin of 1."""

    def __init__(self, rule, context_length: int = 8) -> None:
        super().__init__()
        self.rule, self.context_length = rule, context_length

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        assert context.shape[1] <= self.context_length, "window too long"
        logits = torch.zeros(1, context.shape[1], len(VOCAB))
        for t in range(context.shape[1]):
            logits[0, t, self.rule(context[0, : t + 1].tolist())] = 1.0
        return logits


def test_follows_the_argmax_each_step() -> None:
    # next = last + 1 (mod 3): from "a" the text is b, c, a, b, c
    model = Rule(lambda window: (window[-1] + 1) % 3)
    assert reference().greedy(model, 5, torch.tensor([[0]]), 8, VOCAB) == "bcabc"


def test_crops_to_the_newest_tokens() -> None:
    # next = the oldest token the model sees. With a window of 2 and the prompt "ab":
    # sees "ab" -> 'a'; sees "ba" -> 'b'; sees "ab" -> 'a'.
    model = Rule(lambda window: window[0], context_length=2)
    assert reference().greedy(model, 3, torch.tensor([[0, 1]]), 2, VOCAB) == "aba"


def test_long_prompt_is_cropped_before_the_first_step() -> None:
    model = Rule(lambda window: window[0], context_length=2)
    # the window is "cb" (the last two of "abcb"), so the first new token is 'c'
    assert reference().greedy(model, 1, torch.tensor([[0, 1, 2, 1]]), 2, VOCAB) == "c"


def test_ties_go_to_the_lowest_id() -> None:
    class Flat(torch.nn.Module):
        def forward(self, context: torch.Tensor) -> torch.Tensor:
            return torch.tensor([0.0, 2.0, 2.0]).expand(1, context.shape[1], 3)

    assert reference().greedy(Flat(), 4, torch.tensor([[0]]), 8, VOCAB) == "bbbb"


def test_zero_chars_never_calls_the_model() -> None:
    def refuse(context):
        raise AssertionError("the model was called")

    assert reference().greedy(refuse, 0, torch.tensor([[0]]), 8, VOCAB) == ""
