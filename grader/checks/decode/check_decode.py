"""Checks for problem 5, decode: token ids to text."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

from grader.grading.contracts.contract import Contract
from grader.grading.judging.any_result import comparing, expect_text
from grader.grading.subject.cases import prompt_ids
from grader.grading.subject.mistakes_data import mistakes_of
from grader.grading.subject.strategies import vocab
from grader.locale import marked
from grader.model import artifacts


def return_a_list_of_characters(ids, itc):
    return [itc[int(i)] for i in torch.as_tensor(ids).flatten().tolist()]


def look_the_ids_up_as_tensors(ids, itc):
    return "".join(itc[i] for i in ids.flatten())


def squeeze_the_ids(ids, itc):
    if isinstance(ids, torch.Tensor):
        ids = ids.squeeze().tolist()  # a single id squeezes to an int, not a list
    return "".join(itc[i] for i in ids)


MISTAKES = mistakes_of(globals())


def cases() -> dict[str, tuple]:
    itc = artifacts.shipped_vocab()
    sentence = prompt_ids("Once upon a time, there was a fox.\n")
    return {
        "batch-tensor": (sentence, itc),
        "flat-tensor": (sentence[0], itc),
        "list-of-ints": (sentence[0].tolist(), itc),
        # One id: squeeze() would make it an int, not a list of one.
        "one-id-batch": (sentence[:, :1], itc),
        "one-id-flat": (sentence[0, :1], itc),
        "empty": (torch.zeros(1, 0, dtype=torch.long), itc),
    }


def draw_example(data: st.DataObject) -> tuple:
    size = data.draw(st.integers(1, 30), label="vocab_size")
    ids = data.draw(st.lists(st.integers(0, size - 1), max_size=30), label="ids")
    as_tensor = data.draw(st.booleans(), label="as_tensor")
    return (torch.tensor([ids], dtype=torch.long) if as_tensor else ids), vocab(size)


CONTRACT = Contract(cases=cases, mistakes=MISTAKES,
                    judge=comparing(expect_text, marked("the decoded text")))

test_shipped_vocab, test_random_ids = CONTRACT.tests(
    "Decoding with the shipped vocabulary",
    "Decoding random ids with other vocabularies, against the reference",
    draw_example)
