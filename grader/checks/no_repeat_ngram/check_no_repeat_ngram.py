"""Checks for problem 12, no-repeat-ngram: ban every token that would repeat an n-gram."""

from __future__ import annotations

from typing import Any

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.filtered_logits import expect_like_logits
from grader.grading.subject.cases import corpus_prefix, prompt_ids, shipped_logits
from grader.grading.subject.filter_rules import ngram_bans
from grader.grading.subject.kata import Call, Kata
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import logits
from grader.grading.values.failures import GradeFailure
from grader.locale import tr


# -- the rule, written independently of the reference, with one knob per known mistake --
def rows_of(logits: torch.Tensor, token_ids) -> list[list[int]]:
    """One list of ids per row: a list of ints for 1-D logits, a (B, T) tensor for a batch."""
    if logits.dim() == 1:
        return [list(token_ids)]
    return [list(map(int, row)) for row in token_ids.tolist()]


def bans(ids: list[int], n: int, *, size: int | None = None, skip_last: bool = False,
         latest_only: bool = False, negative_slice: bool = False) -> dict[int, int]:
    """Banned token -> where the earlier n-gram that it would repeat starts."""
    size = n if size is None else size
    if size < 1:
        return {}
    if negative_slice:
        # ids[-(size - 1):] is ids[0:] (the whole list) when size is 1
        prefix = ids[-(size - 1):]
    else:
        prefix = ids[len(ids) - (size - 1):] if len(ids) >= size - 1 else None
    if prefix is None:
        return {}
    last_start = len(ids) - size  # the last complete n-gram starts here
    found: dict[int, int] = {}
    for i in range(last_start + (0 if skip_last else 1)):
        if ids[i:i + size - 1] == prefix:
            found.setdefault(ids[i + size - 1], i)
            if latest_only:
                found = {ids[i + size - 1]: i}
    return found


def banned_logits(logits: torch.Tensor, token_ids, n: int, *, first_row: bool = False,
                  **knobs) -> torch.Tensor:
    rows = rows_of(logits, token_ids)
    if first_row:
        rows = [rows[0]] * len(rows)
    out = logits.clone().view(len(rows), logits.shape[-1])
    for row, ids in enumerate(rows):
        for token in bans(ids, n, **knobs):
            out[row, token] = float("-inf")
    return out.view(logits.shape)


def compare_the_last_n_tokens(x, ids, n):
    return banned_logits(x, ids, n, size=n + 1)


def compare_the_last_n_2_tokens(x, ids, n):
    return banned_logits(x, ids, n, size=n - 1) if n > 1 else None


def take_the_last_n_1_tokens_with_ids(x, ids, n):
    return banned_logits(x, ids, n, negative_slice=True)


def leave_out_the_most_recent_complete_n_gram(x, ids, n):
    return banned_logits(x, ids, n, skip_last=True)


def leave_out_the_most_recent_n_gram_but_for_unigrams(x, ids, n):
    return banned_logits(x, ids, n, skip_last=n > 1)


def ban_only_after_the_latest_match(x, ids, n):
    return banned_logits(x, ids, n, latest_only=True)


def use_the_first_rows_ids_for_every_row(x, ids, n):
    return banned_logits(x, ids, n, first_row=True) if x.dim() == 2 else None


def ban_no_token_at_all(x, ids, n):
    return x.clone()


MISTAKES = mistakes_of(globals())


# -- comparing with the expected result ------------------------------------------------
def show_ids(ids: list[int], limit: int = 24) -> str:
    if len(ids) <= limit:
        return "[" + ", ".join(map(str, ids)) + "]"
    return tr("[{count} ids: ..., {last}]", count=len(ids),
              last=", ".join(map(str, ids[-limit:])))


def expect_bans(got, expected: torch.Tensor, logits: torch.Tensor, token_ids, n: int) -> None:
    """Which entries are -inf first, with the n-gram that explains it; then the kept values."""
    expect_like_logits(got, logits, tr("the result"))
    rows = rows_of(logits, token_ids)
    g = got.reshape(len(rows), -1)
    e = expected.reshape(len(rows), -1)
    x = logits.reshape(len(rows), -1)
    for row, ids in enumerate(rows):
        reasons = ngram_bans(ids, n)
        for token in range(e.shape[1]):
            got_ban, want_ban = bool(g[row, token] == float("-inf")), bool(
                e[row, token] == float("-inf"))
            if got_ban == want_ban:
                continue
            who = (tr("token {token}", token=token) if logits.dim() == 1
                   else tr("token {token} in row {row}", token=token, row=row))
            seen = tr("with token_ids {ids} and n = {n}", ids=show_ids(ids), n=n)
            if want_ban and token in reasons:
                i = reasons[token]
                value = g[row, token].item()
                note = hint = ""
                if value < -1e3 and value == value:
                    note = "\n  " + tr("it holds {value:g}: a large negative number still "
                                       "leaves a small probability.", value=value)
                    hint = tr("use float('-inf')")
                raise GradeFailure(tr(
                    "{who} should be banned {seen}: the n-gram {gram} at position {i} would "
                    "be repeated by it (got {value:g}){note}", who=who, seen=seen,
                    gram=show_ids(ids[i:i + n]), i=i, value=value, note=note), hint=hint)
            if want_ban:  # it was -inf in the input already
                raise GradeFailure(tr("{who} was -inf in the logits and must stay -inf, got "
                                      "{value:g}", who=who, value=g[row, token].item()))
            if n == 1:
                why = tr("it does not occur in token_ids")
            elif len(ids) < n - 1:
                why = tr("with fewer than n - 1 tokens no n-gram is complete, so nothing is "
                         "banned")
            else:
                why = tr("no earlier n-gram starts with the last n - 1 tokens {last} and ends "
                         "with {token}", last=show_ids(ids[len(ids) - (n - 1):]), token=token)
            raise GradeFailure(tr("{who} should not be banned {seen}: {why}", who=who,
                                  seen=seen, why=why))
    kept = ~(e == float("-inf"))
    if not torch.equal(g[kept], e[kept]):
        index = (g != e).logical_and(kept).nonzero()[0].tolist()
        at = tuple(index) if logits.dim() == 2 else (index[1],)
        raise GradeFailure(
            tr("the kept logit at index {at} changed: got {got}, expected {expected} (the "
               "input holds {input}): only the banned entries may change.", at=at,
               got=repr(g[tuple(index)].item()), expected=repr(e[tuple(index)].item()),
               input=repr(x[tuple(index)].item())),
            hint=tr("copy the logits and set the banned entries, without any other arithmetic"))


def judge(got: Any, expected: torch.Tensor, call: Call) -> None:
    expect_bans(got, expected, *call.args)


# -- fixed cases on the shipped model ---------------------------------------------------
def one(prompt: str, n: int, dtype: torch.dtype = torch.float32) -> tuple:
    return (shipped_logits(prompt)[0].to(dtype), prompt_ids(prompt)[0].tolist(), n)


def batch(prompts: list[str], n: int) -> tuple:
    return (shipped_logits(*prompts), torch.cat([prompt_ids(p) for p in prompts]), n)


def cases() -> dict[str, tuple]:
    minus_inf = one("the cat saw the", 2)[0].clone()
    minus_inf[[1, 19, 33]] = float("-inf")  # ' ' (also banned), 'e' and 's'
    rows = ["Tom ran. Tom", "a cat, a cat", "the dog saw "]
    return {
        "bigram": one("the cat saw the", 2),
        "trigram": one("the cat saw the", 3),
        "at-the-very-start": one("Tom ran. Tom", 4),
        "unigram": one("Tom hid.", 1),
        "n-longer-than-text": one("Tom", 6),
        "exactly-n-minus-1-tokens": one("Tom", 4),
        "empty-token-ids": (shipped_logits("\n")[0], [], 2),
        "long-story": one(corpus_prefix(200), 3),
        "float64": one("the cat saw the", 2, torch.float64),
        "already-minus-inf": (minus_inf, one("the cat saw the", 2)[1], 2),
        "batch-bigram": batch(rows, 2),
        "batch-trigram": batch(rows, 3),
        "batch-unigram": batch(rows, 1),
        # The one n-gram to repeat is the most recent, ending at the last token: it
        # needs a text that ends in n equal tokens, which random texts seldom give
        # alone (a loop one short of it passed every other check for n > 1).
        "only-the-last-n-gram": one("The sheep said baaa", 3),
        "one-token-twice": (torch.tensor([0.5, 1.0, -0.5]), [0, 0], 2),
    }


# -- random cases -------------------------------------------------------------------------
@st.composite
def sequences(draw: st.DrawFn, vocab_size: int, length: int, n: int) -> list[int]:
    """Ids from a few distinct tokens, so that n-grams repeat; sometimes the text ends
    with its own first n - 1 tokens, so the n-gram at the very start is the one to match."""
    alphabet = draw(st.integers(1, min(vocab_size, 4)), label="distinct tokens")
    ids = draw(st.lists(st.integers(0, alphabet - 1), min_size=length, max_size=length))
    if n > 1 and len(ids) >= n and draw(st.booleans(), label="echo the start"):
        ids = ids[:len(ids) - (n - 1)] + ids[:n - 1]
    return ids


def draw_example(data: st.DataObject) -> tuple:
    x = data.draw(logits(max_vocab=12), label="logits")
    n = data.draw(st.integers(1, 5), label="n")
    length = data.draw(st.integers(0, 12), label="length")
    rows = [data.draw(sequences(x.shape[1], length, n), label=f"row {b}")
            for b in range(x.shape[0])]
    if x.shape[0] == 1 and data.draw(st.booleans(), label="one row as 1-D"):
        return x[0], rows[0], n
    return x, torch.tensor(rows, dtype=torch.long).view(len(rows), length), n


# On a text that ends in n equal tokens, comparing n tokens and leaving out the most
# recent n-gram both ban nothing: the learner's other cases tell which it is.
CONTRACT = Contract(cases=cases, judge=judge, mistakes=MISTAKES, tell_apart_on_cases=True,
                    returns_new=True)

test_shipped_model, test_random_logits = CONTRACT.tests(
    "Banned tokens for a fixed text on the shipped model",
    "Banned tokens for random texts, n and logits (with ties and -inf), against the reference",
    draw_example)


def test_worked_example(kata: Kata) -> None:
    """A worked example: after 1 2 3 1 2, n = 3 bans 3 (it would repeat 1 2 3)"""
    x = torch.tensor([0.5, -1.0, 2.0, 0.25, 3.0])
    got = kata.run(CONTRACT.method, x, [1, 2, 3, 1, 2], 3, arg_names=CONTRACT.arg_names)
    expect_bans(got, torch.tensor([0.5, -1.0, 2.0, float("-inf"), 3.0]), x, [1, 2, 3, 1, 2], 3)
