"""Checks for problem 14, stream: whole words and sentences, as soon as they exist.

The WordStreamer checks come first: if only stream_generate() is still the
starter's, the WordStreamer is graded before that stops the rest.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import torch
from hypothesis import strategies as st

from grader.checks.stream.stream_word_streamer import (
    POOL,
    Everything,
    FirstWordOnly,
    NoEnd,
    SeparatorLater,
    SpacesOnly,
    draw_pieces,
    drive,
    judge_streamer,
    same_passed_on,
    streamer_cases,
    streamer_lines,
)
from grader.grading.contracts.contract import Contract, Refusal
from grader.grading.contracts.text_from_calls import (
    Untraced,
    WitnessedContract,
    expect_streamed_from_calls,
    trace_text,
    untraced_line,
    untraced_message,
)
from grader.grading.judging.any_result import show
from grader.grading.judging.generated_text import judge_reset_sampled_text
from grader.grading.subject.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes import NOT_RESTORED, generation_loop
from grader.grading.subject.reference import fresh_args
from grader.grading.subject.strategies import model_and_context
from grader.grading.values.equality import Outcome, same_outcome
from grader.grading.values.failures import Diagnosis, GradeFailure, Mistake
from grader.locale import marked, tr
from grader.model import artifacts
from grader.model.spec import ModelSpec
from grader.wording import a_kind

ENDS = {"word": " \n", "sentence": ".!?"}
# A streaming loop may run the model for the next character before it yields
# the chunk that just ended; a chunk that waits for more than that was not streamed.
SLACK = 1


def split_at(text: str, ends: str) -> list[str]:
    """`text` cut right after every character in `ends`; the rest is the last piece."""
    return [chunk for chunk in re.split(f"(?<=[{re.escape(ends)}])", text) if chunk]


def split_chunks(text: str, unit: str) -> list[str]:
    """The chunks `text` streams as."""
    return split_at(text, ENDS[unit])


# -- WordStreamer: its cases, judge and mistakes' streamers in stream_word_streamer.py -
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


def random_case(seed: int, vocabulary: str = "bcdefg?! .\na",
                prompt: tuple[int, ...] = (11, 0, 8)) -> tuple:
    """A small random model over `vocabulary`, by default one in which newlines, '!' and
    '?' come out."""
    config = {"vocab_size": len(vocabulary), "context_length": 8, "n_layer": 2, "n_head": 2,
              "n_embd": 16}
    return ModelSpec("random", config, seed), torch.tensor([prompt]), 8, dict(
        enumerate(vocabulary))


# The grade's hidden models write texts of their own, and words and sentences end at
# a newline, '!' or '?' only where such a text holds one. A file that ends words at
# spaces only passed every check in 2 grades of 3. On these vocabularies every
# character ends its chunk, whatever the weights: the text of newlines is cut after
# each one, and so is the text of '!' and '?'.
EVERY_CHARACTER_ENDS = {"newlines-only": ("\n", "word"),
                        "exclamations-and-questions": ("!?", "sentence")}


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
    for case_id, (vocabulary, unit) in EVERY_CHARACTER_ENDS.items():
        model, context, n, int_to_char = random_case(4, vocabulary, (0,))
        args[case_id] = (model, 6, context, n, int_to_char, unit)
    return args


def dropping_ends(text: str, ends: str) -> list[str]:
    chunks = re.split(f"[{re.escape(ends)}]", text)
    return chunks[:-1] if chunks[-1] == "" else chunks


def end_starts_next(text: str, ends: str) -> list[str]:
    return [chunk for chunk in re.split(f"(?=[{re.escape(ends)}])", text) if chunk]


def so_far(chunks: list[str]) -> list[str]:
    """Each chunk with every chunk before it: a chunk never emptied once yielded."""
    return ["".join(chunks[:k + 1]) for k in range(len(chunks))]


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
    Mistake("yield all the text so far instead of only the new chunk",
            "start the next chunk empty once a chunk is yielded: chunk = \"\" right after "
            "`yield chunk`",
            mistake(None, lambda text, ends: so_far(split_at(text, ends))),
            mistake(None, lambda text, ends: so_far(split_at(text, ends)) + [text][:len(text)])),
    Mistake("make the whole text first, then yield it as one chunk",
            "yield each chunk inside the loop, as soon as its last character is sampled, "
            "then start the next chunk empty",
            mistake(None, lambda text, ends: [text][:len(text)])),
    Mistake("yield one character at a time",
            "collect characters until the one that ends the chunk, then yield them together",
            mistake(None, lambda text, ends: list(text))),
    # Track 1's mistakes that carry over to the loop.
    Mistake(*NOT_RESTORED, partial(mistake(None, split_at), restore=False)),
    Mistake("crop the context only once, before the loop, or not at all",
            "crop to the last context_length tokens before every forward pass",
            partial(mistake(None, split_at), crop="none"), id="do-not-crop-the-context"),
]


def chunk_report(got: list[str], expected: list[str], unit: str) -> str:
    i = next((k for k, (a, b) in enumerate(zip(got, expected)) if a != b),
             min(len(got), len(expected)))
    got_at = show(got[i]) if i < len(got) else tr("nothing more")
    expected_at = show(expected[i]) if i < len(expected) else tr("nothing more")
    ends = ", ".join(repr(c) for c in ENDS[unit])
    return tr("the text is right, but it is cut into other chunks: chunk {k} is {got}, "
              "expected {expected} ({count} chunks, expected {expected_count})\n"
              "  expected {expected_chunks}\n"
              "  got      {got_chunks}\n"
              "  with unit={unit}, a chunk ends right after any of {ends}; what is left at the "
              "end is the last chunk; no chunk is empty",
              k=i + 1, got=got_at, expected=expected_at, count=len(got),
              expected_count=len(expected), expected_chunks=expected[max(0, i - 2): i + 3],
              got_chunks=got[max(0, i - 2): i + 3], unit=repr(unit), ends=ends)


def not_a_generator(call: Call) -> Diagnosis | str:
    if call.outcome[0] == "error" and "not iterable" in call.outcome[1]:
        return Diagnosis.of("\n" + tr("What stream_generate() returned cannot be iterated "
                                       "over, so its chunks cannot come out one at a time."),
                            hint=tr("make it a generator, with `yield chunk` inside the loop"))
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
                tr("chunk {k} ({chunk}) was complete after new character {made}, but it came "
                   "out after {calls} of the model's {total} calls, leaving {left} for the "
                   "{after} characters after it, so some of them were made before it came out.",
                   k=k + 1, chunk=show(chunk), made=made, calls=count, total=total,
                   left=total - count, after=n - made),
                hint=tr("yield each chunk inside the loop, as soon as its last character is "
                        "sampled, instead of making the whole text first and cutting it up"))


def expect_no_repeats(chunks: list[str], new_chars: int) -> None:
    """No chunk repeats the chunk before it whole. A complete chunk ends at its only
    end character, so one that starts with a complete chunk holds it twice: the chunk
    was not emptied once yielded, and the chunks join into more text than was made,
    which the text's own check would only count. A chunk that is the one before it
    again is the same mistake at its smallest: the last flush of a text that ended
    on an end character yields that chunk a second time."""
    joined = sum(len(chunk) for chunk in chunks)
    if joined <= new_chars:
        return
    for k in range(1, len(chunks)):
        before, chunk = chunks[k - 1], chunks[k]
        if not before or not chunk.startswith(before):
            continue
        shown = dict(k=k + 1, chunk=show(chunk), before_k=k, before=show(before))
        opening = (tr("chunk {k} is {chunk}, chunk {before_k} again", **shown)
                   if chunk == before else
                   tr("chunk {k} is {chunk}, which starts with all of chunk {before_k}, "
                      "{before}", **shown))
        raise GradeFailure(opening + tr(
            ": each chunk repeats the text yielded before it, so the {count} chunks join "
            "into {joined} characters for the {new_chars} new ones\n"
            "  chunks {before_k} to {last}: {shown}", count=len(chunks), joined=joined,
            new_chars=new_chars, before_k=k, last=min(k + 2, len(chunks)),
            shown=chunks[k - 1:k + 2]))


def judge(got: Any, expected: list[str], call: Call) -> None:
    model, _, context, context_length, int_to_char, unit = fresh_args(call.args)
    chunks = [chunk for chunk, _ in got]
    for k, chunk in enumerate(chunks):
        if not isinstance(chunk, str):
            raise GradeFailure(tr("chunk {k} is {what}, not a str.", k=k + 1,
                                  what=a_kind(type(chunk).__name__)),
                               hint=tr("yield each chunk as a str"))
    text, expected_text = "".join(chunks), "".join(expected)
    expect_no_repeats(chunks, len(expected_text))
    try:
        judge_reset_sampled_text(text, expected_text, model=model,
                                 prompt_ids=context[0].tolist(), context_length=context_length,
                                 int_to_char=int_to_char, what=tr("the text of the chunks"))
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


CONTRACT = WitnessedContract(  # on hidden models (grader/grading/contracts/text_from_calls.py)
    cases=cases, judge=judge, mistakes=MISTAKES, matches=same_chunks,
    fallback_hint=not_a_generator, refusals=lambda: {"unknown-unit": Refusal(
        CONTRACT.case_args["words"][:5] + ("line",), "stream_generate(..., unit='line')",
        marked("unit must be 'word' or 'sentence'"))},
    witness_model_calls=True,  # the judge counts the calls made before each chunk
)

test_fixed_streams, test_random_models = CONTRACT.tests(
    "The chunks stream_generate() yields for a fixed prompt, as soon as each is complete",
    "The chunks on small random models and vocabularies, against the reference",
    draw_example)


test_unknown_unit = CONTRACT.refusal_test("An unknown unit raises ValueError")
