"""One check's result as plain data: what the report shows and the JSON carries.

Apart from the engine that makes it (plugin.py), so that a report can be read,
scored and shown where no check can run: the learners' copy holds the report and
not the checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader import wording
from grader.grading.values.failures import NamedMistake
from grader.locale import tr
from grader.registry import Problem
from grader.sandbox.wire.printed import Printed


@dataclass
class TestResult:
    name: str
    problem: Problem
    status: str  # "pass", "fail" or "error"
    message: str = ""
    output: Printed | str = ""  # what the code printed; plain text: nothing was cut
    test_code: str = ""
    hint: str = ""  # the fixes `message` offers, shown only on request
    kind: str = ""  # a failure's kind (grading/values/failures.py), "" for a pass
    mistake: NamedMistake | None = None  # the known mistake the failure names
    # The failing call as data, where a contract's check knows it: each argument by
    # name with what it was (grader/grading/subject/inputs.py), and what the call gave.
    arguments: dict[str, str] | None = None
    got: str | None = None
    # Failures of fixed cases that differ only in the case's inputs are alike: the
    # terminal shows one of them. The message without those inputs.
    alike: str = ""
    # "fixed" for a fixed case (whose inputs and answer the learners' copy holds),
    # "drawn" for drawn examples (new to every learner under the instructor's seed),
    # "" for any other check; scoring.py counts a classroom grade's checks other than
    # drawn examples only once the problem's drawn examples pass.
    cases: str = ""


def nothing_handed_in(missing: int) -> str:
    """The run's message where none of the problems graded was handed in: a grade of a
    classroom folder and the gradebook's relabelled report say it alike."""
    return tr("no solution.py of the {problems} graded was handed in",
              problems=wording.problems(missing))
