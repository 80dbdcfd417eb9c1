"""The references of problems 17-19 (vocabulary, windows, batches) against each other,
the shipped files and hand-worked examples; and pairs of tensors as outcomes."""

from __future__ import annotations

import pytest
import torch
from conftest import reference_solution

from grader.grading.values.equality import same_outcome
from grader.model import artifacts

VOCABULARY, WINDOWS, BATCHES = (reference_solution(f) for f in
                                ("17-vocabulary", "18-windows", "19-batches"))


def test_the_encoding_is_the_inverse_of_the_shipped_vocabulary() -> None:
    corpus = artifacts.CORPUS.read_text(encoding="utf-8")
    int_to_char = artifacts.load_vocab()
    everything = "".join(int_to_char.values())
    assert VOCABULARY.encode(everything, corpus).tolist() == list(int_to_char)
    ids = VOCABULARY.encode("Tom ran.\n", corpus)
    assert ids.dtype == torch.long and ids.shape == (9,)
    assert "".join(int_to_char[i] for i in ids.tolist()) == "Tom ran.\n"


def test_an_unknown_character_is_named() -> None:
    with pytest.raises(ValueError, match="'Qbruz'"):
        VOCABULARY.encode("zebra Queen", "the cat sat on a mat, Ben")


def test_windows_by_hand() -> None:
    x, y = WINDOWS.window(torch.arange(10), 4, 0)
    assert x.tolist() == [0, 1, 2, 3] and y.tolist() == [1, 2, 3, 4]
    x, y = WINDOWS.window(torch.arange(10), 4, 5)  # the last of 6
    assert x.tolist() == [5, 6, 7, 8] and y.tolist() == [6, 7, 8, 9]
    for i in (6, -1, 100):
        with pytest.raises(ValueError):
            WINDOWS.window(torch.arange(10), 4, i)


def test_a_batch_is_the_windows_at_the_drawn_starts() -> None:
    data = torch.randint(40, (300,), generator=torch.Generator().manual_seed(5))
    generator = torch.Generator().manual_seed(3)
    x, y = BATCHES.get_batch(data, 7, 6, generator)
    starts = torch.randint(300 - 7, (6,), generator=torch.Generator().manual_seed(3))
    assert x.shape == y.shape == (6, 7)
    for row, start in enumerate(starts.tolist()):
        window_x, window_y = WINDOWS.window(data, 7, start)
        assert torch.equal(x[row], window_x) and torch.equal(y[row], window_y)
    # The generator moved on: the next batch is drawn from where this one left it.
    again = torch.Generator().manual_seed(3)
    torch.randint(300 - 7, (6,), generator=again)
    assert torch.equal(generator.get_state(), again.get_state())


def test_a_batch_of_the_only_window_repeats_it() -> None:
    x, y = BATCHES.get_batch(torch.arange(5), 4, 3, torch.Generator().manual_seed(0))
    assert x.tolist() == [[0, 1, 2, 3]] * 3 and y.tolist() == [[1, 2, 3, 4]] * 3
    with pytest.raises(ValueError):
        BATCHES.get_batch(torch.arange(4), 4, 3, torch.Generator().manual_seed(0))


def test_pairs_of_tensors_compare_item_by_item() -> None:
    pair = (torch.arange(3), torch.arange(1, 4))
    assert same_outcome(("value", pair), ("value", (torch.arange(3), torch.arange(1, 4))))
    assert not same_outcome(("value", pair), ("value", (torch.arange(3), torch.arange(3))))
    assert not same_outcome(("value", pair), ("value", (torch.arange(3),)))
    assert not same_outcome(("value", pair), ("value", list(pair)))  # as `==` on a tuple
    assert same_outcome(("value", ["a", "b"]), ("value", ["a", "b"]))
