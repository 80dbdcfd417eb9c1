"""How a generation loop with a KV cache must call its model, judged from the calls.

No text can show it: a loop that feeds the whole context at every step writes the
same text as one that feeds one token to a cache. Problem 15's check judges the
calls its hidden models saw, and a learners' copy the calls its exported model
saw, both by expect_one_token_per_step, so they say the same.
"""

from __future__ import annotations

from functools import partial

from grader.grading.values.failures import Diagnosis, GradeFailure, Mistake
from grader.locale import tr, translated
from grader.wording import tokens

# On one line, as answers.without_fixes finds it: a graded class's copy leaves it out.
WHOLE_CONTEXT_FIX = "feed only the new token, with the cache of the earlier ones: logits, cache = model.forward_with_cache(next_token, cache)"  # noqa: E501
WHOLE_CONTEXT = Mistake("feed the whole context at every step", WHOLE_CONTEXT_FIX)
REBUILT_EARLY = Mistake(
    "rebuild the cache one step before the window is full",
    "a text of exactly context_length tokens still fits: rebuild only once it is longer "
    "(context.shape[1] > context_length, not >=)")
SHOWN_BEFORE = 4  # calls shown before the first wrong one, so that it is among them


def expect_no_calls_for_no_text(method: str, new_chars: int, calls: list) -> None:
    """With nothing to generate (new_chars 0), the model is not called: a loop that runs
    it once before its first step runs it for nothing, and one step too many at the end
    as well. Generate's and greedy's checks judge it, and a learners' copy too."""
    if new_chars == 0 and calls:
        raise GradeFailure(
            tr("{method}() called the model {count} with new_chars=0, where there is "
               "nothing to generate", method=method,
               count=tr("once") if len(calls) == 1 else tr("{n} times", n=len(calls))),
            hint=tr("call the model inside the loop, once per new character: with "
                    "new_chars=0 the loop runs no step, and the model is not called"))


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
        seen = (tr("{n} call", n=len(calls)) if len(calls) == 1
                else tr("{n} calls", n=len(calls)))
        raise GradeFailure(tr(
            "the grader saw {calls} of the model it gave you for {new_chars} new "
            "tokens; call that model object itself (model(...) or "
            "model.forward_with_cache(...)) once per new token", calls=seen,
            new_chars=new_chars))
    for i in range(1, min(room, len(calls))):
        new, past = calls[i]
        if new == 1 and past > 0:
            continue
        start = max(0, i - SHOWN_BEFORE)
        shown = calls[start:i + 2]
        raise GradeFailure(tr(
            "model call {call} fed {new} with {past} cached; while the text still "
            "fits in the window (the first {room} steps here), every call after the first "
            "must feed just the one new token, with the cache of all the tokens before it\n"
            "  the calls, as [new tokens, cached tokens]: {before}{calls}{more}", call=i + 1,
            new=tokens(new), past=past, room=room, calls=shown,
            before=tr("calls {first} to {last}: ", first=start + 1, last=start + len(shown))
            if start else "",
            more=" ..." if len(calls) > i + 2 else ""),
            partial(named_for, calls, i, prompt_length, context_length))


def named_for(calls: list, i: int, prompt_length: int, context_length: int) -> Diagnosis:
    """The mistake the first wrong call `i` shows, if any: the whole window fed afresh
    at the one step where the text fills it exactly, every call before it right, is a
    rebuild one step early; the whole context fed afresh otherwise, nothing cached."""
    new, past = calls[i]
    if past != 0 or new <= 1:
        return Diagnosis()
    if new == context_length == prompt_length + i:
        return Diagnosis.of(
            "\n" + tr("This is what happens when you {name}: the text before call {call} "
                      "is {count}, which the window still holds.",
                      name=translated(REBUILT_EARLY.name), call=i + 1,
                      count=tokens(context_length)),
            translated(REBUILT_EARLY.hint), REBUILT_EARLY)
    return Diagnosis.of(
        "\n" + tr("This is what happens when you {name}: the text is right, but "
                  "nothing is cached.", name=translated(WHOLE_CONTEXT.name)),
        translated(WHOLE_CONTEXT.hint), WHOLE_CONTEXT)
