"""WordStreamer, the first half of problem 14 (stream): its cases, its judge, and
the streamers that make its known mistakes. grader/checks/stream/check_stream.py
declares its contract with these, and its mistakes.

The harness (grader/sandbox/worker/harnesses.word_streamer) builds the class, puts
each piece, then ends it, and hands back every callback with the call it came in.
"""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from types import SimpleNamespace
from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.judging.any_result import expect_text, show
from grader.grading.subject.cases import prompt_ids
from grader.grading.subject.inputs import describe, short
from grader.grading.subject.kata import Call
from grader.grading.values.equality import Outcome, same_outcome
from grader.grading.values.failures import GradeFailure
from grader.locale import tr
from grader.model import artifacts
from grader.sandbox.worker import harnesses
from grader.wording import a_kind

# Characters for random vocabularies: those that end a chunk, and letters.
POOL = " \n.!?abcdefghijklmnopqrst"


def emitted(calls: list) -> list[tuple[int, str]]:
    """Callbacks merged per put()/end() call, empty ones left out: what came out when.

    Several callbacks in one put() (a word each) say the same as one with all of them.
    """
    said = [(int(when), text) for when, text in calls if text]
    return [(when, "".join(text for _, text in group))
            for when, group in groupby(said, key=itemgetter(0))]


def ids_of(piece) -> list[int]:
    return piece.flatten().tolist() if isinstance(piece, torch.Tensor) else list(piece)


class _Streamer:
    """A WordStreamer with one known mistake, in flush()."""

    def __init__(self, int_to_char, callback):
        self.int_to_char, self.callback, self.text = int_to_char, callback, ""

    def put(self, token_ids):
        self.text += "".join(self.int_to_char[i] for i in ids_of(token_ids))
        self.flush()

    def end(self):
        if self.text:
            self.callback(self.text)
            self.text = ""

    def last_end(self):
        return max(self.text.rfind(" "), self.text.rfind("\n"))

    def pass_on(self, cut):
        if cut > 0:
            self.callback(self.text[:cut])
            self.text = self.text[cut:]


class SpacesOnly(_Streamer):
    def flush(self):
        self.pass_on(self.text.rfind(" ") + 1)


class Everything(_Streamer):
    def flush(self):
        self.pass_on(len(self.text))


class NoEnd(_Streamer):
    def flush(self):
        self.pass_on(self.last_end() + 1)

    def end(self):
        pass


class SeparatorLater(_Streamer):
    def flush(self):
        self.pass_on(self.last_end())


class FirstWordOnly(_Streamer):
    def flush(self):
        found = [i for i in (self.text.find(" "), self.text.find("\n")) if i >= 0]
        self.pass_on(min(found) + 1 if found else 0)


def drive(cls: type, int_to_char: dict, pieces: list) -> list[tuple[int, str]]:
    module = SimpleNamespace(WordStreamer=cls)
    return emitted(harnesses.word_streamer(module, int_to_char, pieces))


def as_form(ids: list[int], form: str):
    if form == "row":  # (1, k): a generation step's token is (1, 1)
        return torch.tensor([ids], dtype=torch.long)
    if form == "flat":
        return torch.tensor(ids, dtype=torch.long)
    if form == "scalar":
        return torch.tensor(ids[0], dtype=torch.long)
    return list(ids)


def pieces_of(text: str, sizes: list[int], form: str = "list") -> list:
    """`text` in the shipped vocabulary, cut into pieces of these sizes, in one form."""
    ids = prompt_ids(text)[0].tolist()
    assert sum(sizes) == len(ids), (text, sizes)
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [as_form(ids[s:s + size], form) for s, size in zip(starts, sizes)]


def streamer_cases() -> dict[str, tuple]:
    """Case id -> (int_to_char, pieces), in the shipped vocabulary."""
    itc = artifacts.shipped_vocab()
    story = "Tom ran to the park.\nThe end."
    ones = [1] * len(story)
    return {
        "one-id-at-a-time": (itc, pieces_of(story, ones)),
        "generation-steps": (itc, pieces_of(story, ones, "row")),
        "several-ids-per-put": (itc, pieces_of("Once upon a time, there was\na fox.",
                                               [7, 7, 7, 6, 3, 0, 4])),
        "newline-inside-a-put": (itc, pieces_of("Lily sang.\nTom ran", [14, 4])),
        "no-space-at-all": (itc, pieces_of("Wow!", [1, 1, 1, 1], "scalar")),
        "ends-with-a-space": (itc, pieces_of("Hi there ", [2, 1, 5, 1], "flat")),
        "spaces-and-newlines-in-a-row": (itc, pieces_of("a  b \n\nc", [1] * 8)),
        "every-shape": (itc, [[6, 1], torch.tensor([16, 1]), torch.tensor([[17, 0]]),
                              torch.tensor(18), torch.zeros(1, 0, dtype=torch.long), []]),
        "nothing": (itc, []),
    }


def describe_call(int_to_char: dict, pieces: list, i: int) -> str:
    if i == len(pieces):
        return "end()"
    return tr("put() of {text}", text=show("".join(int_to_char[t] for t in ids_of(pieces[i]))))


def streamer_lines(named: dict[str, Any]) -> list[str]:
    """What WordStreamer was given, as the learner's class receives it."""
    int_to_char, pieces = named["int_to_char"], named["pieces"]
    text = "".join(int_to_char[t] for piece in pieces for t in ids_of(piece))
    shown = ", ".join(repr(p) if isinstance(p, torch.Tensor) else str(p) for p in pieces)
    if not pieces:
        put = tr("put() called {n} times", n=len(pieces))
    elif len(pieces) == 1:
        put = tr("put() called 1 time, with: {pieces} (the text {text})", pieces=short(shown),
                 text=show(text))
    else:
        put = tr("put() called {n} times, with: {pieces} (the text {text})", n=len(pieces),
                 pieces=short(shown), text=show(text))
    return [f"WordStreamer(int_to_char, callback), int_to_char: {describe(int_to_char)}",
            put, tr("then end()")]


def passed_on(outcome: Outcome) -> Outcome:
    """What a run passed on, merged per call (as the mistakes give it), when every
    callback was given a str."""
    if outcome[0] == "value" and all(isinstance(text, str) for _, text in outcome[1]):
        return ("value", emitted(outcome[1]))
    return outcome


def same_passed_on(got: Outcome, mistake: Outcome) -> bool:
    return same_outcome(passed_on(got), mistake)


def judge_streamer(got: Any, expected: list, call: Call) -> None:
    int_to_char, pieces = call.args
    if call.outcome[0] == "error":
        if got.type == harnesses.WordStreamerNotWritten.__name__:  # an ErrorText
            raise GradeFailure(got.message)
        note = hint = ""
        if any(isinstance(p, torch.Tensor) for p in pieces):
            note = "\n" + tr("put() also receives tensors, of any shape (a generation step "
                             "gives a (1, 1) LongTensor), and these pieces hold one.")
            hint = tr("turn them into a list of ints first: token_ids.flatten().tolist()")
        raise GradeFailure(tr("WordStreamer raised {error}{where}", error=got,
                              where=getattr(got, "where", "")) + note,
                           hint=hint)
    for _, text in got:
        if not isinstance(text, str):
            raise GradeFailure(tr("WordStreamer called the callback with {what}, not a str.",
                                  what=a_kind(type(text).__name__)),
                               hint=tr("pass it the text itself"))
    merged, expected = emitted(got), emitted(expected)
    expect_text("".join(t for _, t in merged), "".join(t for _, t in expected),
                tr("all the text passed to the callback, joined,"))
    if merged != expected:
        calls = range(len(pieces) + 1)
        by_call = [dict(merged).get(i, "") for i in calls]
        wanted = [dict(expected).get(i, "") for i in calls]
        i = next(k for k in calls if by_call[k] != wanted[k])
        so_far = "".join(int_to_char[t] for p in pieces[:i + 1] for t in ids_of(p))
        raise GradeFailure(tr(
            "call {i} of {calls}, {call}, should pass {wanted} to the callback, but it passed "
            "{got}\n  the text put in so far: {so_far}\n  after each put(), everything up to "
            "and including the last space or newline must have been passed on; end() passes "
            "on the rest",
            i=i + 1, calls=len(pieces) + 1, call=describe_call(int_to_char, pieces, i),
            wanted=show(wanted[i]) if wanted[i] else tr("nothing"),
            got=show(by_call[i]) if by_call[i] else tr("nothing"), so_far=show(so_far)))


def draw_pieces(data: st.DataObject) -> tuple:
    chars = data.draw(st.permutations(POOL), label="vocabulary order")
    size = data.draw(st.integers(2, len(POOL)), label="vocab_size")
    int_to_char = dict(enumerate(chars[:size]))
    pieces = []
    for ids in data.draw(st.lists(st.lists(st.integers(0, size - 1), max_size=5),
                                  max_size=8), label="ids put in each call"):
        forms = ["list", "flat", "row"] + (["scalar"] if len(ids) == 1 else [])
        pieces.append(as_form(ids, data.draw(st.sampled_from(forms), label="form")))
    return int_to_char, pieces
