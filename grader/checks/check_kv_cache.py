"""Checks for problem 15, kv-cache: generate() that feeds the model one token per step."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from grader.grading.cases import (
    SHIPPED,
    context_length,
    corpus_prefix,
    generation_cases,
    generation_prompts,
    prompt_ids,
)
from grader.grading.failures import Diagnosis, GradeFailure, Mistake
from grader.grading.kata import Call, Kata
from grader.grading.mistakes_data import mistakes_of
from grader.grading.sampling_judges import judge_reset_sampling
from grader.grading.strategies import generation_example, vocab
from grader.grading.witnessed import WitnessedContract, judge_from_calls
from grader.locale import tr, translated
from grader.model import artifacts
from grader.model.spec import ModelSpec

TOO_LONG = "the model sees at most context_length"  # the model's error for too many tokens


def cases() -> dict[str, tuple]:
    shared = generation_prompts()
    # A prompt 8 tokens short of the window: the cache fills up, then must be rebuilt.
    return generation_cases({"short-context": shared["short-context"],
                             "fills-the-window": (corpus_prefix(context_length() - 8), 30),
                             **shared})


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


def fallback_hint(call: Call) -> Diagnosis | str:
    if call.outcome[0] == "error" and TOO_LONG in call.outcome[1]:
        return Diagnosis.of("\n" + tr("The model was given more tokens than its window holds."),
                            hint=tr("once the text outgrows the window, crop the text to its "
                                    "last context_length tokens and rebuild the cache from "
                                    "that window: forward_with_cache(window, None)"))
    return ""


# Seen in the model's calls, not in the text: no run of a loop can show it.
WHOLE_CONTEXT = Mistake("feed the whole context at every step",
                        "feed only the new token, with the cache of the earlier ones: "
                        "logits, cache = model.forward_with_cache(next_token, cache)")


# Cached attention adds up in another order than full attention, so a float-noise
# tie may go the other way: the fair judge of Track 1's sampling accepts that. Every
# character must then come from the witnessed calls: the calls run on hidden models,
# so a loop that makes its text some other way cannot send them for show.
CONTRACT = WitnessedContract(
    cases=cases, judge=judge_from_calls(judge_reset_sampling), mistakes=MISTAKES,
    fallback_hint=fallback_hint,
    witness_model_calls=True,  # test_one_token_per_step judges the calls
)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt on the shipped model, the same as generate()'s",
    "The text on small random models of other sizes, against the reference",
    generation_example)


def expect_one_token_per_step(calls: list, prompt_length: int, new_chars: int,
                              context_length: int) -> None:
    """After the first call, [1 new token, past > 0 cached] while the window has room.

    Step s (from 0) sees the prompt and s new tokens; they fit in the window while
    prompt_length + s <= context_length. The first call may take the whole prompt
    (or part of it); each later call of those steps must feed one token to a cache.
    """
    room = min(new_chars, max(0, context_length - prompt_length + 1))
    if len(calls) < room:
        # Each new token needs a forward pass of its own; fewer seen means the
        # model was reached some other way than the one it was given.
        raise GradeFailure(tr(
            "the grader saw {calls} call(s) of the model it gave you for {new_chars} new "
            "tokens; call that model object itself (model(...) or "
            "model.forward_with_cache(...)) once per new token", calls=len(calls),
            new_chars=new_chars))
    for i in range(1, min(room, len(calls))):
        new, past = calls[i]
        if new == 1 and past > 0:
            continue
        shown = calls[:min(room, 8)]
        named = Diagnosis()
        if past == 0 and new > 1:
            named = Diagnosis.of(
                "\n" + tr("This is what happens when you {name}: the text is right, but "
                          "nothing is cached.", name=translated(WHOLE_CONTEXT.name)),
                translated(WHOLE_CONTEXT.hint), WHOLE_CONTEXT)
        raise GradeFailure(tr(
            "model call {call} fed {new} token(s) with {past} cached; while the text still "
            "fits in the window (the first {room} steps here), every call after the first "
            "must feed just the one new token, with the cache of all the tokens before it\n"
            "  the calls, as [new tokens, cached tokens]: {calls}{more}", call=i + 1, new=new,
            past=past, room=room, calls=shown, more=" ..." if room > len(shown) else ""),
            lambda named=named: named)


def one_token_cases() -> dict[str, tuple]:
    shipped = CONTRACT.case_args
    config = {"vocab_size": 10, "context_length": 6, "n_layer": 2, "n_head": 2, "n_embd": 8}
    return {
        "short-prompt": shipped["short-context"],
        "one-token-prompt": (SHIPPED, 60, prompt_ids("T"), context_length(),
                             artifacts.shipped_vocab()),
        "fills-the-window": shipped["fills-the-window"],
        "random-model": (ModelSpec("random", config, 7), 20, torch.tensor([[3, 1]]), 6,
                         vocab(10)),
    }


@pytest.mark.parametrize("case_id", list(one_token_cases()))
def test_one_token_per_step(kata: Kata, case_id: str) -> None:
    """After the prompt, the model sees one new token per step while the window has room"""
    call = CONTRACT.check(kata, one_token_cases()[case_id])
    _, new_chars, context, window, _ = call.args
    expect_one_token_per_step(call.record.model_calls or [], context.shape[1], new_chars,
                              window)
