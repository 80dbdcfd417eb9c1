"""Checks for problem 16, sampler: no-repeat-ngram, temperature, top-k, top-p, real sampling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import expect_type
from grader.grading.judging.generated_text import (
    around_the_end,
    characters,
    divergence_report,
    expect_at_most,
    exponentials,
    ids_of_text,
    sampling_scores,
)
from grader.grading.subject.cases import SHIPPED, context_length, corpus_prefix, prompt_ids
from grader.grading.subject.filter_rules import ngram_bans, running_totals, top_k, top_p
from grader.grading.subject.kata import Call
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.reference import fresh_args
from grader.grading.subject.strategies import model_and_context, vocab
from grader.grading.values.failures import GradeFailure
from grader.grading.values.tolerances import NUCLEUS_ATOL, TIE_RTOL
from grader.locale import tr
from grader.model import artifacts
from grader.model.spec import ModelSpec

INF = float("-inf")


def settings_for(temperature=1.0, top_k=0, top_p=1.0, no_repeat_ngram_size=0, eos_id=None,
                 seed=0) -> tuple:
    return (temperature, top_k, top_p, no_repeat_ngram_size, eos_id, seed)


def prompts() -> dict[str, tuple]:
    """Case id -> (prompt, max_new_tokens, settings) on the shipped model."""
    n = context_length()
    return {
        "plain-sampling": ("Once upon a time,", 120, settings_for()),
        "greedy": ("Once upon a time,", 60, settings_for(temperature=0)),
        "greedy-no-repeat": ("Once upon a time,", 80, settings_for(temperature=0,
                                                                   no_repeat_ngram_size=3)),
        "cool": ("Once upon a time,", 80, settings_for(temperature=0.5)),
        "hot-top-k": ("Tom", 80, settings_for(temperature=1.5, top_k=10)),
        "top-k-1": ("Tom", 40, settings_for(top_k=1)),
        "top-p": ("The cat", 80, settings_for(top_p=0.9)),
        "top-p-zero": ("The cat", 40, settings_for(top_p=0.0)),
        "top-p-one": ("The cat", 40, settings_for(top_p=1.0, seed=7)),
        "hot-top-p": ("Once upon a time,", 80, settings_for(temperature=1.5, top_p=0.8)),
        "cool-top-p": ("The cat", 80, settings_for(temperature=0.6, top_p=0.5, seed=2)),
        "top-k-then-top-p": ("Tom", 80, settings_for(temperature=1.3, top_k=4, top_p=0.7)),
        "no-repeat": ("Once upon a time,", 80, settings_for(no_repeat_ngram_size=2)),
        "everything": ("Once upon a time,", 120, settings_for(0.8, 10, 0.9, 3, 0, 3)),
        # Few tokens left by top-k, and no end token: a ban after top-k soon leaves none
        # of them allowed (a loop that banned after top-k passed every other case).
        "top-k-and-bans": ("Once upon a time,", 120, settings_for(top_k=2,
                                                                  no_repeat_ngram_size=3)),
        "story-ends-at-eos": ("Once upon a time,", 300, settings_for(eos_id=0)),
        "other-seed": ("Lily", 80, settings_for(seed=1234)),
        "long-prompt": (corpus_prefix(2 * n + 7), 60, settings_for(
            temperature=0.7, no_repeat_ngram_size=4, seed=5)),
        "zero-tokens": ("The cat", 0, settings_for()),
    }


def cases() -> dict[str, tuple]:
    itc = artifacts.shipped_vocab()
    args: dict[str, tuple] = {
        case_id: (SHIPPED, prompt_ids(prompt), max_new, context_length(), itc, *settings)
        for case_id, (prompt, max_new, settings) in prompts().items()
    }
    # Four tokens and n = 1: after two new tokens every token has been used.
    tiny = ModelSpec("random", {"vocab_size": 4, "context_length": 6, "n_layer": 1,
                                "n_head": 1, "n_embd": 8}, 3)
    args["everything-banned"] = (tiny, torch.tensor([[0, 1]]), 10, 6, vocab(4),
                                 *settings_for(no_repeat_ngram_size=1))
    args["everything-banned-greedy"] = (tiny, torch.tensor([[2, 2]]), 10, 6, vocab(4),
                                        *settings_for(temperature=0, no_repeat_ngram_size=1))
    return args


# -- the rules, written independently of the reference ---------------------------------
def stage(name: str, x: torch.Tensor, bans: dict[int, int], temperature: float, k: int,
          p: float, scale: str) -> torch.Tensor:
    """One stage of the pipeline, by name, so that the mistakes can run them in other orders."""
    if name == "ngram":
        return x.masked_fill(torch.isin(torch.arange(len(x)), torch.tensor(list(bans),
                                                                           dtype=torch.long)), INF)
    if temperature == 0:
        return x  # greedy: only the ban applies
    if name == "temperature":
        return x / temperature if scale == "divide" else x * temperature
    if name == "top_k":
        return top_k(x, k) if k > 0 else x
    return top_p(x, p) if p < 1.0 else x


def loop(model, context, max_new_tokens, context_length, int_to_char, temperature=1.0,
         top_k_=0, top_p_=1.0, ngram=0, eos_id=None, seed=0, *, reseed=False,
         scale="divide", order=("ngram", "temperature", "top_k", "top_p"), ban_window=False,
         keep_eos=False, all_banned="stop"):
    """The sampling loop with one knob per known mistake."""
    generator = torch.Generator().manual_seed(seed)
    ids = context[0].tolist()
    new = []
    for _ in range(max_new_tokens):
        window = ids[-context_length:]
        x = model(torch.tensor([window]))[0, -1]
        for name in order:
            x = stage(name, x, ngram_bans(window if ban_window else ids, ngram), temperature,
                      top_k_, top_p_, scale)
        if bool(torch.isinf(x).all()) and all_banned == "stop":
            break
        if reseed:
            generator = torch.Generator().manual_seed(seed)
        if temperature == 0:
            token = int(x.argmax())
        else:
            token = int(torch.multinomial(F.softmax(x, dim=-1), 1, generator=generator))
        if token == eos_id:
            if keep_eos:
                new.append(token)
            break
        ids.append(token)
        new.append(token)
    return "".join(int_to_char[i] for i in new)


def seed_ignored(*a: Any) -> Any:
    """The loop seeded with 0 whatever `seed`, its last argument (the same loop when it is 0)."""
    return loop(*a[:-1], 0) if a[-1] != 0 else None


def zero_eos_ignored(*a: Any) -> Any:
    """The loop that never stops when eos_id, its tenth argument, is 0 (`if eos_id:`)."""
    return loop(*a[:9], None, a[10]) if a[9] == 0 else None


MISTAKES = mistakes_of(globals(), loop)


# -- the fair judge -----------------------------------------------------------------------
@dataclass
class Step:
    """What the sampler may pick at one step, given the learner's text so far."""

    everything_banned: bool
    banned: dict[int, int]
    probs: torch.Tensor | None = None  # after every filter, in float64
    weights: torch.Tensor | None = None  # before top-k and top-p: how likely each token is
    scores: torch.Tensor | None = None  # weights / q, or the probabilities when greedy
    certain: torch.Tensor | None = None  # kept under any float rounding
    possible: torch.Tensor | None = None  # kept under some float rounding
    rtol: float = TIE_RTOL

    def fair(self, token: int) -> bool:
        """The sampler's pick, or a pick that ties with it up to float rounding (also in
        which tokens the filters keep at their boundaries)."""
        assert self.scores is not None and self.weights is not None
        assert self.possible is not None and self.certain is not None
        if token in self.banned or not bool(self.possible[token]):
            return False
        # A program that keeps `token` also keeps every token more likely than it.
        rivals = self.certain | (self.possible & (self.weights > self.weights[token]))
        return bool(self.scores[token] >= self.scores[rivals].max() * (1 - self.rtol))


class Sampler:
    def __init__(self, model, context_length: int, settings: tuple) -> None:
        self.model, self.context_length = model, context_length
        (self.temperature, self.top_k, self.top_p, self.ngram, self.eos_id,
         self.seed) = settings

    @torch.no_grad()
    def step(self, ids: list[int], draws: int) -> Step:
        logits = self.model(torch.tensor([ids[-self.context_length:]]))[0, -1]
        size = len(logits)
        banned = ngram_bans(ids, self.ngram) if self.ngram > 0 else {}
        if len(banned) == size:
            return Step(True, banned)
        allowed = torch.ones(size, dtype=torch.bool)
        allowed[list(banned)] = False
        if self.temperature == 0:
            probs = F.softmax(logits.double().masked_fill(~allowed, INF), dim=-1)
            return Step(False, banned, probs, probs, probs, allowed, allowed)
        # float32 logits / temperature round differently from float64 or from
        # logits * (1 / temperature): allow a few units in the last place.
        x = (logits.double() / self.temperature).masked_fill(~allowed, INF)
        slack = 4 * 2.0 ** -24 * float(x[allowed].abs().max())
        certain, possible = allowed.clone(), allowed.clone()
        if self.top_k > 0:
            k = min(self.top_k, size)
            above = (x[None, :] > x[:, None] - slack).sum(dim=1) - 1  # rivals that may be larger
            surely_above = (x[None, :] > x[:, None] + slack).sum(dim=1)
            certain &= above < k
            possible &= surely_above < k
            x = top_k(x, k)
        if self.top_p < 1.0:
            cumulative = running_totals(x)
            most_likely = torch.zeros(size, dtype=torch.bool)
            most_likely[x.argmax()] = True
            certain &= (cumulative > 1 - self.top_p + NUCLEUS_ATOL) | most_likely
            possible &= (cumulative > 1 - self.top_p - NUCLEUS_ATOL) | most_likely
            x = top_p(x, self.top_p)
        probs = F.softmax(x, dim=-1)
        # torch.multinomial picks argmax(probs / q): scaling probs changes nothing, so
        # one set of weights serves every set of kept tokens between certain and possible.
        weights = F.softmax((logits.double() / self.temperature).masked_fill(~allowed, INF),
                            dim=-1)
        scores = sampling_scores(weights, exponentials_after(size, self.seed, draws))
        scores = scores.masked_fill(~possible, 0.0)
        return Step(False, banned, probs, weights, scores, certain, possible,
                    rtol=TIE_RTOL + 4 * slack)


def exponentials_after(size: int, seed: int, draws: int) -> torch.Tensor:
    """The numbers torch.multinomial draws at a step, from a generator seeded once.

    Each torch.multinomial(probs, 1) call takes `size` exponentials, whether the
    probabilities are float32 or float64, so after `draws` calls the generator has
    advanced by draws * size of them.
    """
    generator = torch.Generator().manual_seed(seed)
    for _ in range(draws):  # one call at a time: before torch 2.7 they came in blocks
        torch.empty(size, dtype=torch.float32).exponential_(1, generator=generator)
    return exponentials(size, generator.get_state())


def judge_sampler(got, expected: str, *, model, prompt_ids: list[int], max_new_tokens: int,
                  context_length: int, int_to_char: dict[int, str], settings: tuple) -> None:
    """Pass the reference's text, or one that differs from it only where two picks tie in
    float rounding, and that ends for a reason the rules allow."""
    expect_type(got, str, tr("sample_text()'s result"))
    if got == expected:
        return
    sampler = Sampler(model, context_length, settings)
    lookup = ids_of_text(got, int_to_char)
    eos_id = sampler.eos_id
    if eos_id is not None and int_to_char[eos_id] in got:
        raise GradeFailure(tr(
            "the text holds the end-of-sequence character {eos} (id {eos_id}) as new "
            "character {at}: when eos_id is drawn, stop and leave it out",
            eos=repr(int_to_char[eos_id]), eos_id=eos_id,
            at=got.index(int_to_char[eos_id]) + 1))
    expect_at_most(got, max_new_tokens)
    draws = 0
    ids = list(prompt_ids)
    window = lambda i: i[-context_length:]  # noqa: E731 - the judge's own view of the window
    for position, char in enumerate(got):
        step = sampler.step(ids, draws)
        token = lookup[char]
        if step.everything_banned:
            more = len(got) - position
            raise GradeFailure(tr(
                "after {new} every token would repeat an n-gram "
                "(no_repeat_ngram_size={ngram}), so the text must end there; got {more}\n"
                "  expected ...{expected}\n  got      ...{got}",
                new=tr("{n} new character", n=position) if position == 1
                else tr("{n} new characters", n=position),
                ngram=sampler.ngram,
                more=tr("{n} more character", n=more) if more == 1
                else tr("{n} more characters", n=more),
                expected=repr(expected[max(0, position - 30):]),
                got=repr(got[max(0, position - 30):position + 10])))
        if token in step.banned:
            start = step.banned[token]
            gram = "".join(int_to_char[i] for i in ids[start:start + sampler.ngram])
            raise GradeFailure(tr(
                "new character {at} is {char}, which repeats the {ngram}-gram {gram} (it "
                "starts at token {start} of prompt + text): with "
                "no_repeat_ngram_size={ngram} it must be banned\n  got ...{got}",
                at=position + 1, char=repr(char), ngram=sampler.ngram, gram=repr(gram),
                start=start, got=repr(got[max(0, position - 30):position + 1])))
        if not step.fair(token):
            assert step.probs is not None and step.scores is not None
            best = int((step.scores * (step.probs > 0)).argmax())  # what the reference keeps
            raise GradeFailure(divergence_report(got, position, ids, window, step.probs, best,
                                                 token, int_to_char, expected))
        ids.append(token)
        draws += sampler.temperature != 0
    if len(got) == max_new_tokens:
        return
    step = sampler.step(ids, draws)
    if step.everything_banned or (eos_id is not None and step.fair(eos_id)):
        return
    best = int((step.scores * (step.probs > 0)).argmax()) if step.scores is not None else 0
    shown = {"length": characters(len(got)), "next": repr(int_to_char[best]), "eos_id": eos_id,
             "max_new_tokens": max_new_tokens, **around_the_end(got, expected)}
    if eos_id is None:
        raise GradeFailure(tr(
            "the text stops after {length}, but nothing ends it there: the next token drawn "
            "is {next}, some tokens are still allowed, and max_new_tokens={max_new_tokens} is "
            "not reached\n  expected ...{expected}\n  got      ...{got}", **shown))
    raise GradeFailure(tr(
        "the text stops after {length}, but nothing ends it there: the next token drawn is "
        "{next}, not the end-of-sequence id {eos_id}, some tokens are still allowed, and "
        "max_new_tokens={max_new_tokens} is not reached\n  expected ...{expected}\n"
        "  got      ...{got}", **shown))


def judge(got: Any, expected: str, call: Call) -> None:
    model, context, max_new_tokens, context_length, int_to_char = fresh_args(call.args[:5])
    judge_sampler(got, expected, model=model, prompt_ids=context[0].tolist(),
                  max_new_tokens=max_new_tokens, context_length=context_length,
                  int_to_char=int_to_char, settings=tuple(call.named.values())[5:])


def draw_example(data: st.DataObject) -> tuple:
    spec, context = model_and_context(data, windows=2)
    n, size = spec.config["context_length"], spec.config["vocab_size"]
    max_new_tokens = data.draw(st.integers(1, 3 * n), label="max_new_tokens")
    settings = settings_for(
        temperature=data.draw(st.sampled_from([1.0, 0.0, 0.7, 1.6]), label="temperature"),
        top_k=data.draw(st.sampled_from([0, 1, 2, 5, size, size + 3]), label="top_k"),
        top_p=data.draw(st.sampled_from([1.0, 0.9, 0.5, 0.0]), label="top_p"),
        no_repeat_ngram_size=data.draw(st.sampled_from([0, 2, 1, 3]), label="ngram"),
        eos_id=data.draw(st.one_of(st.none(), st.integers(0, size - 1)), label="eos_id"),
        seed=data.draw(st.integers(0, 2**32 - 1), label="seed"),
    )
    return spec, context, max_new_tokens, n, vocab(size), *settings


def empty_draw(call: Call) -> str:
    """A note on torch.multinomial's refusal of a distribution with nothing left in it,
    which no mistake's text can name: every token was removed before the draw, or the
    logits were divided by a temperature of 0."""
    if "probability tensor contains either" not in str(call.outcome[1]):
        return ""
    if call.named.get("temperature") == 0:
        # Divided by 0, the logits are inf and nan: nothing was removed.
        return "\n" + tr("temperature=0 means greedy: take the most likely token "
                         "(argmax). Divided by 0, the logits are inf and nan, from which "
                         "torch.multinomial cannot draw.")
    return "\n" + tr("Every token had been removed when you drew: top-p must always keep the "
                     "most likely token (even for top_p = 0), top-k keeps k of them, and when "
                     "the n-gram bans leave none the loop stops instead of drawing.")


CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, fallback_hint=empty_draw)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt and fixed settings",
    "The text on small random models with random settings, against the reference",
    draw_example)
