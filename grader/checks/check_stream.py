"""Checks for problem 14, stream: whole words and sentences, as soon as they exist.

The WordStreamer checks come first: if only stream_generate() is still the
starter's, the WordStreamer is graded before that stops the rest.
"""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace
from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
from grader.grading.contract import Contract
from grader.grading.equality import Outcome, same_outcome
from grader.grading.failures import Diagnosis, GradeFailure, Mistake
from grader.grading.inputs import describe, short
from grader.grading.judges import expect_text, show
from grader.grading.kata import Call, Kata
from grader.grading.mistakes import NOT_RESTORED, generation_loop
from grader.grading.reference import fresh_args
from grader.grading.sampling_judges import judge_reset_sampled_text
from grader.grading.strategies import model_and_context
from grader.grading.witnessed import (
    Untraced,
    WitnessedContract,
    expect_streamed_from_calls,
    trace_text,
    untraced_line,
    untraced_message,
)
from grader.model import artifacts
from grader.sandbox import harnesses
from grader.sandbox.protocol import ModelSpec

ENDS = {"word": " \n", "sentence": ".!?"}
# A streaming loop may run the model for the next character before it yields
# the chunk that just ended; a chunk that waits for more than that was not streamed.
SLACK = 1
# Characters for random vocabularies: those that end a chunk, and letters.
POOL = " \n.!?abcdefghijklmnopqrst"


def split_at(text: str, ends: str) -> list[str]:
    """`text` cut right after every character in `ends`; the rest is the last piece."""
    chunks, chunk = [], ""
    for char in text:
        chunk += char
        if char in ends:
            chunks.append(chunk)
            chunk = ""
    return chunks + [chunk] if chunk else chunks


def split_chunks(text: str, unit: str) -> list[str]:
    """The chunks `text` streams as."""
    return split_at(text, ENDS[unit])


# -- WordStreamer ----------------------------------------------------------------------

def emitted(calls: list) -> list[tuple[int, str]]:
    """Callbacks merged per put()/end() call, empty ones left out: what came out when.

    Several callbacks in one put() (a word each) say the same as one with all of them.
    """
    merged: list[tuple[int, str]] = []
    for when, text in calls:
        if not text:
            continue
        if merged and merged[-1][0] == when:
            merged[-1] = (when, merged[-1][1] + text)
        else:
            merged.append((int(when), text))
    return merged


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


STREAMER_MISTAKES = [
    Mistake("flush at spaces only",
            "a newline ends a word too: flush up to and including the last space or newline",
            lambda itc, pieces: drive(SpacesOnly, itc, pieces)),
    Mistake("pass on every character at once",
            "hold back the unfinished word after the last space or newline until a later "
            "put() completes it, or end() is called",
            lambda itc, pieces: drive(Everything, itc, pieces)),
    Mistake("leave the rest in the buffer at end()",
            "end() must pass on whatever is left, if anything",
            lambda itc, pieces: drive(NoEnd, itc, pieces)),
    Mistake("flush up to the space but not the space itself",
            "include the space or newline in what you pass on: text[:cut + 1]",
            lambda itc, pieces: drive(SeparatorLater, itc, pieces)),
    Mistake("flush only up to the first space",
            "one put() can complete several words: flush up to the last space or newline",
            lambda itc, pieces: drive(FirstWordOnly, itc, pieces)),
]


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
    return f"put() of {show(''.join(int_to_char[t] for t in ids_of(pieces[i])))}"


def streamer_lines(named: dict[str, Any]) -> list[str]:
    """What WordStreamer was given, as the learner's class receives it."""
    int_to_char, pieces = named["int_to_char"], named["pieces"]
    text = "".join(int_to_char[t] for piece in pieces for t in ids_of(piece))
    shown = ", ".join(repr(p) if isinstance(p, torch.Tensor) else str(p) for p in pieces)
    return [f"WordStreamer(int_to_char, callback), int_to_char: {describe(int_to_char)}",
            f"put() called {len(pieces)} time{'s' if len(pieces) != 1 else ''}"
            + (f", with: {short(shown)} (the text {show(text)})" if pieces else ""),
            "then end()"]


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
            note = ("\nput() also receives tensors, of any shape (a generation step "
                    "gives a (1, 1) LongTensor), and these pieces hold one.")
            hint = "turn them into a list of ints first: token_ids.flatten().tolist()"
        raise GradeFailure(f"WordStreamer raised {got}{getattr(got, 'where', '')}" + note,
                           hint=hint)
    for _, text in got:
        if not isinstance(text, str):
            raise GradeFailure(f"WordStreamer called the callback with a "
                               f"{type(text).__name__}, not a str.",
                               hint="pass it the text itself")
    merged, expected = emitted(got), emitted(expected)
    expect_text("".join(t for _, t in merged), "".join(t for _, t in expected),
                "all the text passed to the callback, joined,")
    if merged != expected:
        calls = range(len(pieces) + 1)
        by_call = [dict(merged).get(i, "") for i in calls]
        wanted = [dict(expected).get(i, "") for i in calls]
        i = next(k for k in calls if by_call[k] != wanted[k])
        so_far = "".join(int_to_char[t] for p in pieces[:i + 1] for t in ids_of(p))
        raise GradeFailure(
            f"call {i + 1} of {len(pieces) + 1}, {describe_call(int_to_char, pieces, i)}, "
            f"should pass {show(wanted[i]) if wanted[i] else 'nothing'} to the callback, "
            f"but it passed {show(by_call[i]) if by_call[i] else 'nothing'}\n"
            f"  the text put in so far: {show(so_far)}\n"
            "  after each put(), everything up to and including the last space or "
            "newline must have been passed on; end() passes on the rest")


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


# No method of Solution: the harness builds the class, puts each piece, then ends it,
# and hands back every callback with the call it came in. Judged live only.
STREAMER = Contract(
    method="WordStreamer", arg_names=("int_to_char", "pieces"), harness="word_streamer",
    cases=streamer_cases, judge=judge_streamer, mistakes=STREAMER_MISTAKES,
    matches=same_passed_on, goldens=False, judges_errors=True, describe=streamer_lines,
)

test_word_streamer, test_word_streamer_random = STREAMER.tests(
    "What WordStreamer passes to its callback, and when, for fixed pieces",
    "What WordStreamer passes on for random pieces and vocabularies, against the reference",
    draw_pieces)


# -- stream_generate() -----------------------------------------------------------------

def corpus_slice(start: int, length: int) -> str:
    return corpus_prefix(start + length)[start:]


def random_case(seed: int) -> tuple:
    """A small random model with a vocabulary in which newlines, '!' and '?' come out."""
    config = {"vocab_size": 12, "context_length": 8, "n_layer": 2, "n_head": 2, "n_embd": 16}
    return ModelSpec("random", config, seed), torch.tensor([[11, 0, 8]]), 8, dict(
        enumerate("bcdefg?! .\na"))


def prompts() -> dict[str, tuple[str, int, str]]:
    """Case id -> (prompt, new_chars, unit) on the shipped model."""
    n = context_length()
    return {
        "words": ("Once upon a time,", 70, "word"),
        "sentences": ("Once upon a time,", 70, "sentence"),
        "question-sentences": (corpus_slice(2701, 30), 50, "sentence"),
        "words-long-prompt": (corpus_prefix(2 * n + 7), 40, "word"),
        "zero-chars": ("The cat", 0, "word"),
        "one-char": ("Once upon a time", 1, "sentence"),
    }


def cases() -> dict[str, tuple]:
    args = {
        case_id: (SHIPPED, new_chars, prompt_ids(prompt), context_length(),
                  artifacts.shipped_vocab(), unit)
        for case_id, (prompt, new_chars, unit) in prompts().items()
    }
    for unit, seed in (("word", 2), ("sentence", 5)):
        model, context, n, int_to_char = random_case(seed)
        args[f"random-model-{unit}s"] = (model, 40, context, n, int_to_char, unit)
    return args


def dropping_ends(text: str, ends: str) -> list[str]:
    chunks, chunk = [], ""
    for char in text:
        if char in ends:
            chunks.append(chunk)
            chunk = ""
        else:
            chunk += char
    return chunks + [chunk] if chunk else chunks


def end_starts_next(text: str, ends: str) -> list[str]:
    chunks, chunk = [], ""
    for char in text:
        if char in ends:
            if chunk:
                chunks.append(chunk)
            chunk = char
        else:
            chunk += char
    return chunks + [chunk] if chunk else chunks


def mistake(unit: str | None, chunks):
    """Run a mistake's `chunks(text, ends)` on the reference text (for one unit only)."""
    def run(model, new_chars, context, context_length, int_to_char, unit_=None, **knobs):
        used = unit_ or "word"
        if unit is not None and used != unit:
            return None  # this mistake shows only with the other unit
        text = generation_loop(model, new_chars, context, context_length, int_to_char, **knobs)
        return chunks(text, ENDS[used])
    return run


MISTAKES = [
    Mistake("leave out the character that ends each chunk",
            "keep it: a word ends with its space or newline, a sentence with its '.', '!' or "
            "'?', so that the chunks join back into the text",
            mistake(None, dropping_ends)),
    Mistake("yield a chunk before its end character, which then starts the next chunk",
            "add the character to the chunk first, then yield the chunk if it ends with it",
            mistake(None, end_starts_next)),
    Mistake("forget the last, unfinished chunk",
            "after the loop, yield what is left if it is not empty",
            mistake(None, lambda text, ends: [c for c in split_at(text, ends) if c[-1] in ends])),
    Mistake("end words at spaces only",
            "a newline ends a word too",
            mistake("word", lambda text, ends: split_at(text, " "))),
    Mistake("end sentences at '.' only",
            "'!' and '?' end a sentence too",
            mistake("sentence", lambda text, ends: split_at(text, "."))),
    Mistake("yield words when unit='sentence'",
            "with unit='sentence', a chunk ends only after '.', '!' or '?'",
            mistake("sentence", lambda text, ends: split_chunks(text, "word"))),
    Mistake("yield one character at a time",
            "collect characters until the one that ends the chunk, then yield them together",
            mistake(None, lambda text, ends: list(text))),
    # Track 1's mistakes that carry over to the loop.
    Mistake(*NOT_RESTORED, partial(mistake(None, split_at), restore=False)),
    Mistake("do not crop the context",
            "crop to the last context_length tokens before every forward pass",
            partial(mistake(None, split_at), crop="none")),
]


def chunk_report(got: list[str], expected: list[str], unit: str) -> str:
    i = next((k for k, (a, b) in enumerate(zip(got, expected)) if a != b),
             min(len(got), len(expected)))
    got_at = show(got[i]) if i < len(got) else "nothing more"
    expected_at = show(expected[i]) if i < len(expected) else "nothing more"
    ends = ", ".join(repr(c) for c in ENDS[unit])
    return (f"the text is right, but it is cut into other chunks: chunk {i + 1} is {got_at}, "
            f"expected {expected_at} ({len(got)} chunks, expected {len(expected)})\n"
            f"  expected {expected[max(0, i - 2): i + 3]}\n"
            f"  got      {got[max(0, i - 2): i + 3]}\n"
            f"  with unit={unit!r}, a chunk ends right after any of {ends}; what is left "
            "at the end is the last chunk; no chunk is empty")


def not_a_generator(call: Call) -> Diagnosis | str:
    if call.outcome[0] == "error" and "not iterable" in call.outcome[1]:
        return Diagnosis.of("\nWhat stream_generate() returned cannot be iterated over, so its "
                            "chunks cannot come out one at a time.",
                            hint="make it a generator, with `yield chunk` inside the loop")
    return ""


def same_chunks(got: Outcome, mistake: Outcome) -> bool:
    """The learner's answer pairs each chunk with the model calls made before it came
    out; a mistake's answer is the chunks alone."""
    if got[0] == "value":
        got = ("value", [chunk for chunk, _ in got[1]])
    return same_outcome(got, mistake)


def expect_streamed(pairs: list, total_calls: int) -> None:
    """Each chunk came out before the characters after it were made.

    Every character needs a model call made after the character before it exists.
    So when chunk k comes out as soon as it is complete, the model still has at
    least one call to make for each character after it; a loop that calls the
    model for the next step before yielding (SLACK) is still streaming. What a
    loop does before its first character (one call for the whole prompt or one
    per prompt token) and how many calls it makes a step do not matter. A loop
    that makes the whole text before its first yield has no calls left at all.
    """
    n = sum(len(chunk) for chunk, _ in pairs)
    total = max([total_calls, *(count for _, count in pairs)])
    made = 0
    for k, (chunk, count) in enumerate(pairs):
        made += len(chunk)
        if total - count < n - made - SLACK:
            raise GradeFailure(
                f"chunk {k + 1} ({show(chunk)}) was complete after new character {made}, but "
                f"it came out after {count} of the model's {total} calls, leaving "
                f"{total - count} for the {n - made} characters after it, so some of them were "
                "made before it came out.",
                hint="yield each chunk inside the loop, as soon as its last character is "
                "sampled, instead of making the whole text first and cutting it up")


def judge(got: Any, expected: list[str], call: Call) -> None:
    model, _, context, context_length, int_to_char, unit = fresh_args(call.args)
    chunks = [chunk for chunk, _ in got]
    for k, chunk in enumerate(chunks):
        if not isinstance(chunk, str):
            raise GradeFailure(f"chunk {k + 1} is a {type(chunk).__name__}, not a str.",
                               hint="yield each chunk as a str")
    text, expected_text = "".join(chunks), "".join(expected)
    try:
        judge_reset_sampled_text(text, expected_text, model=model,
                                 prompt_ids=context[0].tolist(), context_length=context_length,
                                 int_to_char=int_to_char, what="the text of the chunks")
    except GradeFailure as failure:
        traced = trace_text(text, call)
        if isinstance(traced, Untraced):
            failure.message += "\n  " + untraced_line(text, traced)
        raise
    # Text that differs from the reference's only at float-noise ties is fair;
    # its chunks are then those of the learner's own text.
    wanted = list(expected) if text == expected_text else split_chunks(text, unit)
    if chunks != wanted:
        raise GradeFailure(chunk_report(chunks, wanted, unit))
    expect_streamed(got, len(call.record.model_calls or []))
    # Counting calls is not enough: calls made for show would count too. Each
    # character must come from a call that saw the window before it, served
    # before its chunk came out, and after the chunk before it.
    traced = trace_text(text, call)
    if isinstance(traced, Untraced):
        raise GradeFailure(untraced_message(text, traced))
    if traced is not None:
        expect_streamed_from_calls(got, traced, SLACK)


def draw_example(data: st.DataObject) -> tuple:
    spec, context = model_and_context(data)
    n, size = spec.config["context_length"], spec.config["vocab_size"]
    chars = data.draw(st.permutations(POOL), label="vocabulary order")[:size]
    new_chars = data.draw(st.integers(0, 3 * n), label="new_chars")
    unit = data.draw(st.sampled_from(["word", "sentence"]), label="unit")
    return spec, new_chars, context, n, dict(enumerate(chars)), unit


CONTRACT = WitnessedContract(  # on hidden models (grader/grading/witnessed.py)
    cases=cases, judge=judge, mistakes=MISTAKES, matches=same_chunks,
    fallback_hint=not_a_generator,
    witness_model_calls=True,  # the judge counts the calls made before each chunk
)

test_fixed_streams, test_random_models = CONTRACT.tests(
    "The chunks stream_generate() yields for a fixed prompt, as soon as each is complete",
    "The chunks on small random models and vocabularies, against the reference",
    draw_example)


def test_unknown_unit(kata: Kata) -> None:
    """An unknown unit raises ValueError"""
    CONTRACT.expect_refusal(kata, CONTRACT.case_args["words"][:5] + ("line",),
                            "stream_generate(..., unit='line')",
                            "unit must be 'word' or 'sentence'")
