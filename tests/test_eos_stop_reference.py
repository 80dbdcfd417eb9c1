"""The reference on a hand-made model whose every step is known in advance."""

from __future__ import annotations

import torch
from conftest import reference_solution

VOCAB = {0: "\n", 1: "a", 2: "b", 3: "c"}


def reference():
    return reference_solution("13-eos-stop")


class Script(torch.nn.Module):
    """A 'model' that puts all the probability on the next token of a script.

    With a one-hot distribution, torch.multinomial can only return that token,
    so the text is known without running anything: the script's characters.
    """

    def __init__(self, script: list[int]) -> None:
        super().__init__()
        self.script = script
        self.calls = 0

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        token = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        logits = torch.full((1, context.shape[1], len(VOCAB)), -1e4)
        logits[0, -1, token] = 0.0
        return logits


def run(script, max_new_tokens, stop=(), eos_id=0):
    model = Script(script)
    text = reference().generate_until(model, torch.tensor([[1]]), max_new_tokens, 8, VOCAB,
                                      eos_id, stop)
    return text, model.calls


def test_stops_at_eos_and_leaves_it_out() -> None:
    # a b EOS c: the text is "ab", and the model is not called after the EOS.
    assert run([1, 2, 0, 3], 10) == ("ab", 3)


def test_max_new_tokens_comes_first() -> None:
    assert run([1, 2, 0, 3], 2) == ("ab", 2)


def test_eos_right_at_the_start() -> None:
    assert run([0, 1], 5) == ("", 1)


def test_zero_tokens_calls_nothing() -> None:
    assert run([1], 0) == ("", 0)


def test_stop_string_is_cut_off() -> None:
    # a b c a b: "bc" is complete after the third character.
    assert run([1, 2, 3, 1, 2], 10, stop=("bc",)) == ("a", 3)


def test_longest_stop_string_ending_at_once_is_cut() -> None:
    # "abc" and "c" both end the text "abc" at the third character: cut "abc".
    assert run([1, 2, 3, 1], 10, stop=["c", "abc"]) == ("", 3)


def test_first_stop_string_to_end_wins() -> None:
    # "ab" is complete at the second character, before "bca" could be.
    assert run([1, 2, 3, 1], 10, stop=("bca", "ab")) == ("", 2)


def test_prompt_does_not_count_for_stop_strings() -> None:
    # The prompt is "a"; the new text "bc..." never holds "ab" by itself.
    assert run([2, 3, 3], 3, stop=("ab",)) == ("bcc", 3)


def test_another_eos_id() -> None:
    assert run([1, 2, 3, 1], 10, eos_id=3) == ("ab", 3)
