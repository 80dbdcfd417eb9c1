"""The suite computes with the threads OMP_NUM_THREADS gives it (one, unless set),
in xdist's workers and in a run of one process alike (tests/conftest.py)."""

from __future__ import annotations

import os

import torch


def test_the_test_process_computes_with_the_threads_it_was_given() -> None:
    # Fails in a run without xdist on any machine of more than one core if
    # conftest's setting comes after torch read the variable (a plugin imports it).
    assert torch.get_num_threads() == int(os.environ["OMP_NUM_THREADS"])
