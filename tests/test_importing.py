"""grader.importing: the collector is off while torch and the rest are imported, and
on again after, as it was; what the first block made is frozen, and nothing after it."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import pytest

from grader import importing
from grader.importing import without_collections


@pytest.fixture(autouse=True)
def frozen_already(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this test process, the blocks freeze nothing: freezing it would keep its
    earlier tests' garbage for good. Freezing is tested in a process of its own."""
    monkeypatch.setattr(importing, "_frozen", True)


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


FREEZING = textwrap.dedent("""
    import gc, json, weakref
    from grader.importing import without_collections

    class Node:
        pass

    with without_collections():
        imported = [[i] for i in range(200_000)]  # tracked objects, as an import makes
    first = {"frozen": gc.get_freeze_count(), "youngest": gc.get_count()[0],
             "on": gc.isenabled()}

    later = Node()
    later.cycle = later  # garbage only a collection finds
    alive = weakref.ref(later)
    del later
    with without_collections():  # a second block (a notebook's next grade)
        pass
    gc.collect()
    print(json.dumps({**first, "frozen_after": gc.get_freeze_count(),
                      "later_collected": alive() is None}))
""")


def test_the_first_block_freezes_what_it_made_and_a_later_one_freezes_nothing():
    import json

    done = subprocess.run([sys.executable, "-c", FREEZING], capture_output=True, text=True,
                          timeout=120, check=True)
    seen = json.loads(done.stdout)
    assert seen["on"]
    assert seen["frozen"] >= 200_000, seen
    # Nothing left for the first collection to walk: it would walk them all.
    assert seen["youngest"] < 100, seen
    assert seen["frozen_after"] == seen["frozen"], seen
    assert seen["later_collected"], seen
