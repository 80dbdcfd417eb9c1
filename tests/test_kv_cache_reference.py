"""The KV-cache reference on examples worked out by hand."""

from __future__ import annotations

import pytest
import torch
from conftest import ROOT, module_from, reference_solution

from grader.grading.subject import cases
from grader.model import artifacts

reference = reference_solution("15-kv-cache")
generate = reference_solution("06-generate")
checks = module_from(ROOT / "grader/checks/kv_cache/check_kv_cache.py",
                     "kv_cache_checks")

ITC = dict(enumerate("abcde"))


class CountingCache:
    """Predicts (last token + 1) % 5 with certainty; keeps a cache of the right length.

    Refuses more than context_length tokens, like the real model, and records
    each call as [new tokens, cached tokens].
    """

    def __init__(self, context_length):
        self.context_length = context_length
        self.calls = []

    def forward_with_cache(self, tokens, cache=None):
        past = 0 if cache is None else cache[0][0].shape[2]
        if past + tokens.shape[1] > self.context_length:
            raise ValueError("too many tokens")
        self.calls.append([tokens.shape[1], past])
        logits = torch.full((1, tokens.shape[1], 5), float("-inf"))
        for t, token in enumerate(tokens[0].tolist()):
            logits[0, t, (token + 1) % 5] = 0.0
        keys = torch.zeros(1, 1, past + tokens.shape[1], 1)
        return logits, [(keys, keys.clone())]

    def __call__(self, tokens):
        return self.forward_with_cache(tokens)[0]


def test_one_token_per_step_then_a_rebuild_each_step():
    model = CountingCache(context_length=4)
    # Prompt "ab"; the text grows to 3 and 4 tokens with room, then every step
    # after that has 5 tokens to crop to 4: the cache is rebuilt from the window.
    assert reference.generate_cached(model, 5, torch.tensor([[0, 1]]), 4, ITC) == "cdeab"
    assert model.calls == [[2, 0], [1, 2], [1, 3], [4, 0], [4, 0]]


def test_a_long_prompt_is_cropped_before_the_first_call():
    model = CountingCache(context_length=4)
    assert reference.generate_cached(model, 2, torch.tensor([[0, 1, 2, 3, 4, 0]]), 4,
                                     ITC) == "bc"
    assert model.calls == [[4, 0], [4, 0]]


def test_zero_chars_calls_nothing():
    model = CountingCache(context_length=4)
    assert reference.generate_cached(model, 0, torch.tensor([[0]]), 4, ITC) == ""
    assert model.calls == []


def test_a_window_of_one_token_rebuilds_every_step():
    model = CountingCache(context_length=1)
    assert reference.generate_cached(model, 3, torch.tensor([[4]]), 1, ITC) == "abc"
    assert model.calls == [[1, 0], [1, 0], [1, 0]]


@pytest.mark.parametrize("prompt, new_chars", [("Tom", 60), ("\n", 100)])
@torch.no_grad()
def test_same_text_as_generate_on_the_shipped_model(prompt, new_chars):
    model, itc, n = artifacts.shipped_model(), artifacts.shipped_vocab(), cases.context_length()
    context = cases.prompt_ids(prompt)
    assert reference.generate_cached(model, new_chars, context, n, itc) == generate.generate(
        model, new_chars, context, n, itc)


@pytest.mark.parametrize("calls, ok", [
    ([[3, 0], [1, 3], [1, 4], [1, 5]], True),   # the reference
    ([[2, 0], [1, 2], [1, 3], [1, 4]], True),   # all but the last prompt token first
    ([[3, 0], [4, 0], [5, 0], [6, 0]], False),  # the whole text every step
    ([[3, 0], [1, 0], [1, 0], [1, 0]], False),  # the new token without the cache
])
def test_one_token_rule(calls, ok):
    try:
        checks.expect_one_token_per_step(calls, prompt_length=3, new_chars=4, context_length=8)
    except AssertionError:
        assert not ok
    else:
        assert ok


def named_in(calls: list, prompt_length: int, new_chars: int, context_length: int) -> tuple:
    """The failure's message and the mistake its diagnosis names, for these calls."""
    from grader.grading.judging.cached_steps import expect_one_token_per_step

    with pytest.raises(AssertionError) as failed:
        expect_one_token_per_step(calls, prompt_length, new_chars, context_length)
    diagnosis = failed.value.explain()
    return failed.value.message, diagnosis.mistake.name if diagnosis.mistake else None


def test_a_rebuild_one_step_early_is_named_as_such_with_the_call_shown():
    """A cache rebuilt when the text fills the window exactly (>= for >) was named
    "feed the whole context at every step", under the first eight calls only, which
    never reached the wrong one (call 48 of 48 steps)."""
    calls = [[1, 0], *[[1, past] for past in range(1, 47)], [48, 0], [48, 0]]
    message, name = named_in(calls, prompt_length=1, new_chars=49, context_length=48)
    assert name == "rebuild the cache one step before the window is full"
    assert "model call 48 fed 48 tokens with 0 cached" in message
    assert "calls 44 to 49: [[1, 43], [1, 44], [1, 45], [1, 46], [48, 0], [48, 0]]" in message
    # the whole text fed afresh at every step is still that mistake
    message, name = named_in([[3, 0], [4, 0], [5, 0], [6, 0]], 3, 4, 8)
    assert name == "feed the whole context at every step"
    assert "[[3, 0], [4, 0], [5, 0]] ..." in message and "calls 1 to" not in message
