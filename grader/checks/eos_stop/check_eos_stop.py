"""Checks for problem 13, eos-stop: generation that stops at an end token or a stop string."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_type
from grader.grading.judging.generated_text import (
    Choice,
    around_the_end,
    characters,
    divergence_report,
    expect_at_most,
    ids_of_text,
    reset_sampling_choice,
)
from grader.grading.subject.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.reference import fresh, fresh_args
from grader.grading.subject.strategies import model_and_context, vocab
from grader.grading.values.failures import GradeFailure
from grader.locale import tr
from grader.model import artifacts
from grader.model.spec import ModelSpec


def prompts() -> dict[str, tuple]:
    """Case id -> (prompt, max_new_tokens, end character, stop strings) on the shipped model."""
    n = context_length()
    return {
        "newline-never-drawn": ("Once upon a time,", 120, "\n", ()),
        "period-as-eos": ("Once upon a time,", 120, ".", ()),
        "eos-after-long-prompt": (corpus_prefix(2 * n + 7), 60, ".", ()),
        "max-before-eos": ("Once upon a time,", 12, ".", ()),
        "eos-exactly-at-max": ("Once upon a time,", 21, ".", ()),
        "eos-one-after-max": ("Once upon a time,", 22, ".", ()),
        "stop-string": ("Once upon a time,", 120, "\n", (" frog",)),
        "stop-before-eos": ("Tom", 120, ".", ("shy",)),
        "eos-before-stop": ("Tom", 120, ".", ("frog",)),
        "stop-as-list": ("Tom", 120, "\n", ["the"]),
        "overlapping-stops": ("Once upon a time,", 120, "\n", ("cat.", "at.")),
        "longer-stop-ends-later": ("Once upon a time,", 120, "\n", ("hid", "frog hid")),
        # "here was a" starts before "was" and ends after it: the text stops where "was"
        # is completed, not where the earliest stop string starts.
        "longer-stop-starts-earlier": ("Once upon a time,", 120, "\n", ("was", "here was a")),
        "stop-across-prompt": ("Tom", 60, "\n", ("m h",)),
        "stop-in-prompt": ("Tom", 60, "\n", ("om",)),
        "zero-tokens": ("The cat", 0, ".", ("a",)),
        "long-run": ("\n", 2 * n + 4, "\n", ()),
    }


def cases() -> dict[str, tuple]:
    itc = artifacts.shipped_vocab()
    lookup = artifacts.char_to_int(itc)
    args: dict[str, tuple] = {
        case_id: (SHIPPED, prompt_ids(prompt), max_new, context_length(), itc, lookup[end], stop)
        for case_id, (prompt, max_new, end, stop) in prompts().items()
    }
    # A small random model that does draw its end token.
    spec = ModelSpec("random", {"vocab_size": 6, "context_length": 8, "n_layer": 1,
                                "n_head": 2, "n_embd": 8}, 7)
    args["random-model-eos"] = (spec, torch.tensor([[1, 2]]), 30, 8, vocab(6), 0, ())
    return args


def loop(model, context, max_new_tokens, context_length, int_to_char, eos_id, stop=(), *,
         keep_eos=False, eos="stop", keep_stop=False, use_stop=True, stop_on_prompt=False,
         stop_after_loop=False, extra=0, restore=True, first_listed=False):
    """The reference loop with one knob per known mistake."""
    generator = torch.Generator().manual_seed(0)  # the same draws as torch.manual_seed(0)
    initial_state = generator.get_state()
    prompt = "".join(int_to_char[i] for i in context[0].tolist())
    text = ""
    for _ in range(max_new_tokens + extra):
        if context.shape[1] > context_length:
            context = context[:, -context_length:]
        probs = F.softmax(model(context)[:, -1, :], dim=-1)
        next_token = torch.multinomial(probs, 1, generator=generator)
        if restore:
            generator.set_state(initial_state)
        token = next_token.item()
        if token == eos_id and eos == "stop":
            if keep_eos:
                text += int_to_char[token]
            break
        context = torch.cat((context, next_token), dim=1)
        if token != eos_id or eos == "append":
            text += int_to_char[token]
        seen = prompt + text if stop_on_prompt else text
        ended = [s for s in stop if seen.endswith(s)] if use_stop and not stop_after_loop else []
        if ended:
            cut = len(ended[0]) if first_listed else max(map(len, ended))
            return text if keep_stop else text[: max(0, len(text) - cut)]
    if stop_after_loop:
        ended = [s for s in stop if text.endswith(s)]
        if ended:
            return text[: len(text) - max(len(s) for s in ended)]
    return text


MISTAKES = mistakes_of(globals(), loop)


# -- the fair judge, for text that may end early --------------------------------------
def judge_until(got, expected: str, *, model, prompt_ids: list[int], max_new_tokens: int,
                context_length: int, int_to_char: dict[int, str], eos_id: int,
                stop) -> None:
    """Pass the reference's text, or a text that differs only where two picks tie in float
    rounding and that ends for a reason the rules allow."""
    expect_type(got, str, tr("generate_until()'s result"))
    if got == expected:
        return
    lookup = ids_of_text(got, int_to_char)
    eos_char = int_to_char.get(eos_id)
    if eos_char is not None and eos_char in got:
        at = got.index(eos_char)
        raise GradeFailure(
            tr("the text holds the end-of-sequence character {eos} (id {eos_id}) as new "
               "character {at} (expected {length} characters: {end} at the end).",
               eos=repr(eos_char), eos_id=eos_id, at=at + 1, length=len(expected),
               end=repr(expected[-30:])),
            hint=tr("when eos_id is sampled, stop and leave its character out"))
    expect_at_most(got, max_new_tokens)
    for s in stop:
        if s in got:
            at = got.index(s)
            raise GradeFailure(
                tr("the text goes on after the stop string {stop}, which it contains at "
                   "character {at}, so it did not stop where that stop string was completed.",
                   stop=repr(s), at=at),
                hint=tr("stop as soon as the new text ends with a stop string, and cut it off"))
    def choose(ids: list[int]) -> Choice:
        # The generator is rewound after every draw, so a step's pick depends only on
        # the window the model sees: the learner's own prefix is judged as it stands.
        return reset_sampling_choice(model, ids[-context_length:])

    ids = list(prompt_ids)
    for step, char in enumerate(got):
        choice = choose(ids)
        if not bool(choice.fair[lookup[char]]):
            raise GradeFailure(divergence_report(got, step, ids, lambda i: i[-context_length:],
                                                 choice.probs, choice.best, lookup[char],
                                                 int_to_char, expected))
        ids.append(lookup[char])
    if ends_fairly(got, ids, choose, max_new_tokens, eos_id, stop, lookup):
        return
    shorter = cut_shorter(got, ids, choose, max_new_tokens, stop, lookup)
    if shorter:
        cut, longest = shorter
        raise GradeFailure(tr(
            "the text stops after {length}, where the stop string {cut} was cut off; but the "
            "longer stop string {longest} ends the text there too ({end}), and all of it must "
            "go\n  expected ...{expected}\n  got      ...{got}",
            length=characters(len(got)), cut=repr(cut), longest=repr(longest),
            end=repr((got + cut)[-len(longest) - 10:]), **around_the_end(got, expected)))
    if stop and len(got) < len(expected) and expected.startswith(got):
        # Every pick fair, and the expected text goes on where this one stops: what
        # ended it was cut off with more than itself.
        raise GradeFailure(tr(
            "the text stops {count} short of the expected text, which goes on with "
            "{missing}: the characters before a stop string stay in the text, and only the "
            "stop string itself is cut off\n  expected ...{expected}\n  got      ...{got}",
            count=characters(len(expected) - len(got)),
            missing=repr(expected[len(got):]), **around_the_end(got, expected)),
            hint=tr("cut off exactly the stop string: text[: len(text) - len(stop_string)]; "
                    "str.rstrip and str.strip take off every character found in the string "
                    "they are given, as often as it comes"))
    raise GradeFailure(tr(
        "the text stops after {length}, but nothing ends it there: the next token drawn is "
        "{next}, not the end-of-sequence id {eos_id}, no stop string ends the text, and "
        "max_new_tokens={max_new_tokens} is not reached\n  expected ...{expected}\n"
        "  got      ...{got}",
        length=characters(len(got)), next=repr(int_to_char[choose(ids).best]), eos_id=eos_id,
        max_new_tokens=max_new_tokens, **around_the_end(got, expected)))


def fair_stop_strings(got: str, ids: list[int], choose: Callable[[list[int]], Choice],
                      max_new_tokens: int, stop, lookup: dict[str, int]
                      ) -> Iterator[tuple[str, list[str]]]:
    """Each stop string s that fair picks could have generated right after the text
    (and then cut off), with no stop string ending the text before s is whole;
    with the stop strings that end the text once s is."""
    for s in stop:
        if len(got) + len(s) > max_new_tokens or any(ch not in lookup for ch in s):
            continue
        more = list(ids)
        for j, char in enumerate(s):
            if not bool(choose(more).fair[lookup[char]]):
                break
            more.append(lookup[char])
            ended = [t for t in stop if (got + s[:j + 1]).endswith(t)]
            if j + 1 < len(s) and ended:
                break  # another stop string would have ended the text earlier
            if j + 1 == len(s):
                yield s, ended


def ends_fairly(got: str, ids: list[int], choose: Callable[[list[int]], Choice],
                max_new_tokens: int, eos_id: int, stop, lookup: dict[str, int]) -> bool:
    """Whether some allowed ending explains a text that, so far, only made fair picks."""
    if len(got) == max_new_tokens:
        return True
    if bool(choose(ids).fair[eos_id]):
        return True
    # Was it a stop string, generated and then cut off, the longest to end the text?
    return any(max(len(t) for t in ended) == len(s)
               for s, ended in fair_stop_strings(got, ids, choose, max_new_tokens, stop, lookup))


def cut_shorter(got: str, ids: list[int], choose: Callable[[list[int]], Choice],
                max_new_tokens: int, stop, lookup: dict[str, int]) -> tuple[str, str] | None:
    """(s, t) if the text is what is left after cutting the stop string s, generated by
    fair picks, where the longer stop string t ends the text as well."""
    for s, ended in fair_stop_strings(got, ids, choose, max_new_tokens, stop, lookup):
        longest = max(ended, key=len) if ended else s
        if len(longest) > len(s):
            return s, longest
    return None


def judge(got: Any, expected: str, call: Call) -> None:
    model, context, max_new_tokens, context_length, int_to_char, eos_id, stop = (
        fresh_args(call.named.values()))
    judge_until(got, expected, model=model, prompt_ids=context[0].tolist(),
                max_new_tokens=max_new_tokens, context_length=context_length,
                int_to_char=int_to_char, eos_id=eos_id, stop=stop)


def first_met(text: str, length: int) -> list[str]:
    """The pieces of text of this length, the one met last for the first time first."""
    pieces = [text[j:j + length] for j in range(len(text) - length + 1)]
    return list(reversed(dict.fromkeys(pieces)))


def draw_example(data: st.DataObject) -> tuple:
    """A random model and context, with end tokens and stop strings the model meets."""
    spec, context = model_and_context(data, windows=2)
    n, size = spec.config["context_length"], spec.config["vocab_size"]
    itc = vocab(size)
    max_new_tokens = data.draw(st.integers(1, 3 * n), label="max_new_tokens")
    # What the model writes when nothing stops it: end tokens and stop strings
    # picked from it are met along the way, not only by chance.
    with torch.no_grad():
        free = loop(fresh(spec), context, max_new_tokens, n, itc, -1)
    ending = data.draw(st.sampled_from(["end token", "stop string", "both", "neither"]),
                       label="what should end the text")
    lookup = artifacts.char_to_int(itc)
    met = [lookup[c] for c in first_met(free, 1)]
    unmet = [i for i in range(size) if i not in met]
    if ending in ("end token", "both") and met:
        eos_id = met[data.draw(st.integers(0, len(met) - 1), label="eos_id: nth met last")]
    else:
        eos_id = data.draw(st.sampled_from(unmet) if unmet else st.integers(0, size - 1),
                           label="eos_id")
    stop: list[str] = []
    if ending in ("stop string", "both") and free:
        for _ in range(data.draw(st.integers(1, 3), label="stop strings")):
            pieces = first_met(free, data.draw(st.integers(1, min(3, len(free)))))
            stop.append(pieces[data.draw(st.integers(0, len(pieces) - 1),
                                         label="stop: nth piece met last")])
    else:
        chars = st.sampled_from([itc[i] for i in range(size)])
        stop = data.draw(st.lists(st.text(chars, min_size=2, max_size=3), max_size=2),
                         label="stop")
    stop_arg = data.draw(st.sampled_from([tuple(stop), stop]), label="stop as")
    return spec, context, max_new_tokens, n, itc, eos_id, stop_arg


# Stop strings looked for only after the loop cut none that the text does not end
# with, as if ignored: the learner's other cases tell the two apart (without them, one
# such bug was named "ignore the stop strings" on five checks, rightly on one).
CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, tell_apart_on_cases=True)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt, end token and stop strings",
    "The text on small random models, with random end tokens and stop strings",
    draw_example)
