"""Checks that judge how the model is used: text that must come from the calls seen.

The witness (grader/sandbox/host/witness.py) logs every forward pass a witnessed
call makes: the window each row saw and the logits it answered. That proves
calls were made, not that the text came from them: a loop could make its text
some other way and send calls for show. So, for these checks,

- the models are hidden (grader/model/hidden_weights.py): weights drawn by the grader
  at grade time, which the worker can only reach through the witness;
- each new token must follow from a logged pass that saw the window before it
  (the prompt and the tokens so far, cropped to the window): the pick that
  Track 1's sampling (seed 0, the generator restored after every draw) makes
  from that pass's logits, or a token tied with it within float rounding, as
  the fair judge of grader/grading/judging/any_result.py allows;
- for a stream, the passes that made a chunk's characters were served before
  the chunk came out, and those that made the characters after it (but for
  the next one, which a loop may compute before it yields) after.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace
from itertools import takewhile
from typing import Any

import torch

from grader.grading.contracts.contract import Contract, Refusal
from grader.grading.judging.any_result import show
from grader.grading.judging.generated_text import sampled_choice
from grader.grading.subject import cases
from grader.grading.subject.kata import Call, Judge, Kata
from grader.grading.values.failures import GradeFailure, SubmissionUnavailable
from grader.locale import tr
from grader.model import artifacts
from grader.model.hidden_weights import hide_args

# The reference answers of the declared models' cases checked against the goldens
# in this process, by (problem, case id): a reference does not change mid-grade.
_VERIFIED: set[tuple[str, str]] = set()


def witness_serves(kata: Kata) -> bool:
    """Whether the learner's calls run in a worker whose model calls the grader
    serves (a forked worker has a witness; a spawned one may not)."""
    if kata.unavailable or kata.stuck:
        return False  # the call fails at once: no worker is started to find out
    kata.submission.load()
    worker = kata.submission._worker  # noqa: SLF001 - the one the next call runs in
    return worker is not None and getattr(worker, "witness", None) is not None


@dataclass(frozen=True)
class WitnessedContract(Contract):
    """A contract whose every call runs on hidden models.

    Its fixed cases are declared on the shipped and seeded random models, whose
    goldens check the reference; the learner's answer on the hidden stand-ins
    is judged against the live reference on the same hidden models.
    """

    def check(self, kata: Kata, args: tuple, case_id: str | None = None, *,
              judge: Judge | None = None) -> Call:
        if not witness_serves(kata):
            return super().check(kata, args, case_id, judge=judge)
        if case_id and self.goldens:
            self._verify_golden(kata, args, case_id)
        hidden = hide_args(args, artifacts.build_model)
        try:
            return super().check(kata, hidden, judge=judge)
        except SubmissionUnavailable:
            raise
        except GradeFailure as failure:
            if case_id:  # the report names the case the hidden models stand in for
                self.locate(failure, self.bind(kata, hidden), case_id)
            raise

    def _verify_golden(self, kata: Kata, args: tuple, case_id: str) -> None:
        if (self.problem, case_id) in _VERIFIED or kata.golden(case_id) is None:
            return
        with torch.no_grad():
            live = kata.reference_call(self.called, args, {})
            live = list(live) if self.iterate else live
        kata.expected(case_id, live, self.same_as_golden)  # raises if they disagree
        _VERIFIED.add((self.problem, case_id))

    def expect_refusal(self, kata: Kata, refusal: Refusal) -> None:
        if witness_serves(kata):
            refusal = replace(refusal, args=hide_args(refusal.args, artifacts.build_model))
        super().expect_refusal(kata, refusal)


# -- where each token came from ------------------------------------------------------

@dataclass(frozen=True)
class Untraced:
    """The first new token that no logged pass accounts for, and why."""

    step: int
    reason: str


def trace_tokens(tokens: list[int], prompt: list[int], context_length: int,
                 passes: list[Any], int_to_char: dict[int, str]) -> list[int] | Untraced:
    """For each new token, the index of the pass that made it, or the first that
    none made.

    The pass that made token t is the first, from the one that made token t-1,
    with a row that saw the window before t; the token must be a fair pick from
    that row's logits.
    """
    seen: dict[tuple[int, ...], list[tuple[int, int]]] = {}
    for i, logged in enumerate(passes):
        for row, window in enumerate(logged.windows):
            if window is not None:
                seen.setdefault(tuple(window), []).append((i, row))
    exponentials: dict[int, Any] = {}
    ids, made, start = list(prompt), [], 0
    for step, token in enumerate(tokens):
        window = ids[-context_length:]
        found = seen.get(tuple(window), [])
        at = bisect.bisect_left(found, (start, -1))
        if at == len(found):
            text = show("".join(int_to_char.get(t, "?") for t in window))
            return Untraced(step, tr(
                "no model call since call {call}, the one that made the character before it, "
                "was given the window before it, {window} ({n} tokens)", call=start + 1,
                window=text, n=len(window)) if step else tr(
                "no model call was given the window before it, {window} ({n} tokens)",
                window=text, n=len(window)))
        # The first after the pass that made the token before; that same pass only
        # if no later one saw this window (a loop may keep the logits of a window).
        after = bisect.bisect_left(found, (start + 1, -1)) if made else at
        i, row = found[after] if after < len(found) else found[at]
        logits = passes[i].last[row]
        size = int(logits.shape[-1])
        if size not in exponentials:
            exponentials[size] = cases.seed_state(0)
        choice = sampled_choice(torch.softmax(logits.double(), dim=-1), exponentials[size])
        if not 0 <= token < size or not bool(choice.fair[token]):
            return Untraced(step, tr(
                "model call {call}, which was given the window before it, makes {token!r} "
                "there (sampling with the generator seeded with 0 and restored after every "
                "draw)", call=i + 1, token=int_to_char.get(choice.best, "?")))
        made.append(i)
        ids.append(token)
        start = i
    return made


def text_tokens(text: str, int_to_char: dict[int, str]) -> list[int]:
    """The token ids of `text`, up to its first character the vocabulary lacks."""
    lookup = artifacts.char_to_int(int_to_char)
    return [lookup[char] for char in takewhile(lookup.__contains__, text)]


def untraced_message(text: str, untraced: Untraced) -> str:
    """Why text that is right did not come from the calls: the whole failure."""
    return tr("{character} did not come from the model calls the grader served: {reason}. "
              "Each character must be sampled from the logits of a call of the model you were "
              "given, on the window before it", character=character(text, untraced.step),
              reason=untraced.reason)


def untraced_line(text: str, untraced: Untraced) -> str:
    """The first character the calls do not account for, and why: the evidence a
    failure about wrong text shows too (true of an honest mistake as well)."""
    return tr("{character}: {reason}", character=character(text, untraced.step),
              reason=untraced.reason)


def character(text: str, step: int) -> str:
    return tr("new character {position} ({char!r})", position=step + 1,
              char=text[step] if step < len(text) else "")


def trace_text(text: str, call: Call) -> list[int] | Untraced | None:
    """trace_tokens for a generate()-style call's text; None where no pass was
    logged (a worker with no witness)."""
    passes = call.record.model_passes
    if passes is None:
        return None
    _, _, context, context_length, int_to_char = call.args[:5]
    return trace_tokens(text_tokens(text, int_to_char), context[0].tolist(), context_length,
                        passes, int_to_char)


def judge_from_calls(judge: Judge) -> Judge:
    """`judge` (of a generate()-style method's text), then: every character came
    from a witnessed call. Where `judge` fails, the failure says which character
    first did not come from the calls, if one did not."""

    def judged(got: Any, expected: Any, call: Call) -> None:
        try:
            judge(got, expected, call)
        except GradeFailure as failure:
            if isinstance(got, str):
                traced = trace_text(got, call)
                if isinstance(traced, Untraced):
                    failure.message += "\n  " + untraced_line(got, traced)
            raise
        traced = trace_text(got, call)
        if isinstance(traced, Untraced):
            raise GradeFailure(untraced_message(got, traced))

    return judged


def expect_streamed_from_calls(pairs: list, made: list[int], slack: int) -> None:
    """Each chunk came out after the passes that made it, and before those that
    made the characters after it (but for `slack` of them)."""
    position = 0
    none = float("inf")
    later = [none] * (len(made) + 1)  # later[j]: the earliest pass of tokens j and on
    for j in range(len(made) - 1, -1, -1):
        later[j] = min(made[j], later[j + 1])
    for k, (chunk, mark) in enumerate(pairs):
        end = position + len(chunk)
        for j in range(position, min(end, len(made))):
            if made[j] >= mark:
                raise GradeFailure(tr(
                    "chunk {chunk} ({text}) came out after {calls} model calls, but its new "
                    "character {position} came from call {call}, made after it came out: "
                    "yield a chunk once its characters are sampled, not before", chunk=k + 1,
                    text=show(chunk), calls=mark, position=j + 1, call=made[j] + 1))
        first = later[min(end + slack, len(made))]
        if first != none and first < mark:
            j = next(j for j in range(end + slack, len(made)) if made[j] == first)
            raise GradeFailure(
                tr("chunk {chunk} ({text}) came out after {calls} model calls, but new "
                   "character {position}, after it, came from call {call}, so some of them "
                   "were made before it came out.", chunk=k + 1, text=show(chunk), calls=mark,
                   position=j + 1, call=int(first) + 1),
                hint=tr("yield each chunk inside the loop, as soon as its last character is "
                        "sampled, instead of making the whole text first"))
        position = end
