"""A witnessed call never runs while the reference does; nor does a starter's first.

The witness answers a submission's model calls from the grader's process. Had
the reference run meanwhile (as it does beside an unwitnessed call, to share
the cores), how fast the witness answered would vary with what the reference
was computing, and a submission timing its calls could read the reference's
work off them. So for a witnessed submission the reference runs after the call.
"""

from __future__ import annotations

import pytest

from grader.grading.subject.kata import Kata
from grader.registry import find
from grader.sandbox.host.process import CallOutcome


class Recording:
    """A submission process that records what would run beside each call."""

    load_error = None

    def __init__(self, witnessed: bool, calls: int = 1) -> None:
        self.witnessed, self.calls, self.beside = witnessed, calls, []

    def call(self, method, args, kwargs, watch, iterate, while_waiting):
        self.beside.append(while_waiting)
        return CallOutcome(result="learner's")


class Reference:
    def generate(self) -> str:
        return "reference's"


@pytest.mark.parametrize("witnessed", [True, False])
def test_the_reference_runs_beside_a_call_only_when_it_is_not_witnessed(witnessed):
    submission = Recording(witnessed)
    kata = Kata(find("generate"), submission, Reference())  # type: ignore[arg-type]
    assert kata.compare("generate") == (("value", "learner's"), "reference's")
    (beside,) = submission.beside
    assert (beside is None) == witnessed


@pytest.mark.parametrize("starter", [True, False])
def test_a_first_call_runs_beside_the_reference_unless_the_file_is_the_starter(starter):
    # A starter's first call only says it is not implemented: the reference's run
    # beside it would be wasted. Any other file's first call overlaps the reference's.
    submission = Recording(witnessed=False, calls=0)
    kata = Kata(find("generate"), submission, Reference(), starter=starter)  # type: ignore[arg-type]
    assert kata.compare("generate") == (("value", "learner's"), "reference's")
    (beside,) = submission.beside
    assert (beside is None) == starter
