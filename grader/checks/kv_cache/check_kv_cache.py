"""Checks for problem 15, kv-cache: generate() that feeds the model one token per step."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from grader.grading.contracts.text_from_calls import WitnessedContract, judge_from_calls
from grader.grading.judging.cached_steps import (
    REBUILT_EARLY,
    WHOLE_CONTEXT,
    expect_one_token_per_step,
)
from grader.grading.judging.generated_text import judge_reset_sampling
from grader.grading.judging.refusals import says_too_long
from grader.grading.subject.cases import (
    context_length,
    corpus_prefix,
    generation_cases,
    generation_prompts,
)
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import generation_example, vocab
from grader.grading.values.failures import Diagnosis
from grader.locale import tr
from grader.model.spec import ModelSpec


def cases() -> dict[str, tuple]:
    shared = generation_prompts()
    # A prompt 8 tokens short of the window: the cache fills up, then must be rebuilt.
    made = generation_cases({"short-context": shared["short-context"],
                             "fills-the-window": (corpus_prefix(context_length() - 8), 30),
                             **shared, "one-token-prompt": ("T", 60)})
    # A model of other sizes, whose window fills within the first steps.
    config = {"vocab_size": 10, "context_length": 6, "n_layer": 2, "n_head": 2, "n_embd": 8}
    made["random-model"] = (ModelSpec("random", config, 7), 20, torch.tensor([[3, 1]]), 6,
                            vocab(10))
    return made


def cached_loop(model, new_chars, context, context_length, int_to_char, *, full="rebuild",
                crop_prompt=True, pass_cache=True, restore=True):
    """The reference loop with one knob per known mistake."""
    generator = torch.manual_seed(0)
    initial_state = generator.get_state()
    if crop_prompt:
        context = context[:, -context_length:]
    cache, fresh, text = None, context, ""
    for _ in range(new_chars):
        if full == "drop-oldest" and cache is not None:
            extra = cache[0][0].shape[2] + fresh.shape[1] - context_length
            if extra > 0:
                cache = [(k[:, :, extra:], v[:, :, extra:]) for k, v in cache]
        logits, cache = model.forward_with_cache(fresh, cache if pass_cache else None)
        probs = F.softmax(logits[:, -1, :], dim=-1)
        next_token = torch.multinomial(probs, 1, generator=generator)
        if restore:
            generator.set_state(initial_state)
        text += int_to_char[next_token.item()]
        context = torch.cat((context, next_token), dim=1)
        if full == "rebuild" and context.shape[1] > context_length:
            context = context[:, -context_length:]
            cache, fresh = None, context
        else:
            fresh = next_token
    return text


MISTAKES = mistakes_of(globals(), cached_loop)
# Seen in the model's calls, not in the text (grader/grading/judging/cached_steps.py): one of this
# problem's mistakes too, for its id, its fix and its translations.
SEEN_IN_CALLS = (WHOLE_CONTEXT, REBUILT_EARLY)


def fallback_hint(call: Call) -> Diagnosis | str:
    if call.outcome[0] == "error" and says_too_long(call.outcome[1]):
        return Diagnosis.of("\n" + tr("The model was given more tokens than its window holds."),
                            hint=tr("once the text outgrows the window, crop the text to its "
                                    "last context_length tokens and rebuild the cache from "
                                    "that window: forward_with_cache(window, None)"))
    return ""


# Cached attention adds up in another order than full attention, so a float-noise
# tie may go the other way: the fair judge of Track 1's sampling accepts that. Every
# character must then come from the witnessed calls: the calls run on hidden models,
# so a loop that makes its text some other way cannot send them for show.
CONTRACT = WitnessedContract(
    cases=cases, judge=judge_from_calls(judge_reset_sampling), mistakes=MISTAKES,
    fallback_hint=fallback_hint,
    witness_model_calls=True,  # test_one_token_per_step judges the calls
)

# A learners' copy stores this contract's cases too, and judges the calls its exported
# model saw by the same rule (grader/release/build.py's CALL_RULES).
PRACTICE_CALLS = "one-token-per-step"

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt on the shipped model, the same as generate()'s",
    "The text on small random models of other sizes, against the reference",
    generation_example)


def one_token_cases() -> dict[str, tuple]:
    """The cases whose calls are judged, by the ids the text's checks give them too, so
    that `gpt-kata trace kv-cache --case ID` takes an id this check prints."""
    return {case_id: CONTRACT.case_args[case_id] for case_id in
            ("short-context", "one-token-prompt", "fills-the-window", "random-model")}


@pytest.mark.parametrize("case_id", list(one_token_cases()))
def test_one_token_per_step(kata: Kata, case_id: str) -> None:
    """After the prompt, the model sees one new token per step while the window has room"""
    call = CONTRACT.check(kata, one_token_cases()[case_id])
    _, new_chars, context, window, _ = call.args
    expect_one_token_per_step(call.record.model_calls or [], context.shape[1], new_chars,
                              window)
