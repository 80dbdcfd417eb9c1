"""grader.importing: the collector is off while torch and the rest are imported, and
on again after, as it was."""

from __future__ import annotations

import gc

import pytest

from grader.importing import without_collections


def test_the_collector_is_off_inside_and_back_on_after_even_on_an_error():
    assert gc.isenabled()
    with without_collections():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ImportError), without_collections():
        import a_module_that_is_not_there  # noqa: F401
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off():
    gc.disable()
    try:
        with without_collections():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
