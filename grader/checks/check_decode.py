"""Checks for problem 5, decode: token ids to text."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.grading import cases
from grader.grading.judges import expect_text
from grader.grading.skeleton import Kata, Mistake, check_against_reference
from grader.grading.strategies import GRADING, vocab
from grader.model import artifacts

PROBLEM = "decode"
METHOD = "decode"
ARG_NAMES = ("token_ids", "int_to_char")

MISTAKES = [
    Mistake("return a list of characters", "join them into one str: ''.join(...)",
            lambda ids, itc: [itc[int(i)] for i in torch.as_tensor(ids).flatten().tolist()]),
    Mistake("look the ids up as tensors", "a tensor is not a dict key; use .tolist() or .item()",
            lambda ids, itc: "".join(itc[i] for i in ids.flatten())),
]


def fixed_args() -> dict[str, tuple]:
    itc = artifacts.shipped_vocab()
    sentence = cases.prompt_ids("Once upon a time, there was a fox.\n")
    return {
        "batch-tensor": (sentence, itc),
        "flat-tensor": (sentence[0], itc),
        "list-of-ints": (sentence[0].tolist(), itc),
        "empty": (torch.zeros(1, 0, dtype=torch.long), itc),
    }


def check(kata: Kata, args: tuple, case_id: str | None = None) -> None:
    def judge(got, expected) -> None:
        expect_text(got, expected, "the decoded text")

    check_against_reference(kata, METHOD, args, case_id, judge, MISTAKES, ARG_NAMES)


@pytest.mark.parametrize("case_id", list(fixed_args()))
def test_shipped_vocab(kata: Kata, case_id: str) -> None:
    """Decoding with the shipped vocabulary"""
    check(kata, fixed_args()[case_id], case_id)


@GRADING
@given(data=st.data())
def test_random_ids(kata: Kata, data: st.DataObject) -> None:
    """Decoding random ids with other vocabularies, against the reference"""
    size = data.draw(st.integers(1, 30), label="vocab_size")
    ids = data.draw(st.lists(st.integers(0, size - 1), max_size=30), label="ids")
    as_tensor = data.draw(st.booleans(), label="as_tensor")
    token_ids = torch.tensor([ids], dtype=torch.long) if as_tensor else ids
    check(kata, (token_ids, vocab(size)))
