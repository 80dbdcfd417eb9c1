"""A Ctrl-C stops a grade even when its KeyboardInterrupt is raised inside a finaliser,
where Python swallows it (grader/grading/engine/ctrl_c.py)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from conftest import ROOT

from grader.grading.engine import ctrl_c

# Grades crop-context's reference in process. Right after the first check's result,
# an object is dropped whose __del__ sends the process a SIGINT: the handler runs
# inside __del__, and its KeyboardInterrupt is "ignored" there, as one is when the
# key is pressed during any finaliser or garbage collection.
GRADE_WITH_A_SWALLOWED_CTRL_C = """
import os, signal, sys
# As a terminal's foreground command starts, whatever the test process inherited:
# a SIGINT ignored or blocked there would be ignored or blocked here too.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
from grader.grading.engine import plugin
from grader.grading.engine.session import grade_problems
from grader.registry import find
from grader.sandbox.host.pool import WorkerPool

swallowed, results = [], []
sys.unraisablehook = lambda unraisable: swallowed.append(unraisable.exc_type.__name__)


class PressedInAFinaliser:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        sum(range(1000))  # bytecode for the handler to run in


record = plugin.GradingPlugin._record


def record_then_press(self, *args):
    record(self, *args)
    results[:] = self.results
    if len(self.results) == 1:
        PressedInAFinaliser()


plugin.GradingPlugin._record = record_then_press


def graded_or_stopped(problem):  # how a grade of its reference in a pool of its own ended
    pool = WorkerPool(sandbox=None)
    try:
        grade_problems({problem: problem.reference}, pool)
        return "to the end"
    except KeyboardInterrupt:
        return "stopped"
    finally:
        pool.close()


problem = find("crop-context")
print("swallowed:", graded_or_stopped(problem), len(results), swallowed)
"""


def test_a_ctrl_c_swallowed_by_a_finaliser_still_stops_the_grade(
        both_grades: subprocess.CompletedProcess[str]) -> None:
    said = said_after("swallowed:", both_grades)
    # The press was swallowed (the scenario happened), and the grade stopped anyway,
    # before the next check: one result of crop-context's seven.
    assert said.split() == ["stopped", "1", "['KeyboardInterrupt']"], (both_grades.stdout,
                                                                      both_grades.stderr)


def test_a_sigterm_swallowed_before_the_grade_still_stops_it(
        both_grades: subprocess.CompletedProcess[str]) -> None:
    said = said_after("terminated:", both_grades)
    assert said.split() == ["stopped", "['KeyboardInterrupt']"], (both_grades.stdout,
                                                                  both_grades.stderr)


def test_a_command_ended_from_outside_exits_130_whatever_failed_after(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An import that SIGTERM cut short fails when it is imported again ("cannot load
    module more than once per process"): the command still ends as an interrupted one,
    without a traceback; and a command that went on to its end says it was ended."""
    from grader.cli import main as cli

    def cut_short(args):
        raise ImportError("cannot load module more than once per process")

    monkeypatch.setattr(ctrl_c, "_terminated", type(ctrl_c._terminated)())
    monkeypatch.setattr(cli, "list_problems", cut_short)
    with pytest.raises(ImportError):
        cli.main(["list"])
    ctrl_c._terminated.set()
    assert cli.main(["list"]) == 130
    monkeypatch.setattr(cli, "list_problems", lambda args: 0)
    assert cli.main(["list"]) == 130


# A module whose import is cut by a SIGTERM halfway: it ends, whole, and the command
# is interrupted after it.
CUT_IMPORT = """
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from grader.learner.output import handle_stop_signals

# As a terminal's foreground command starts, whatever the test process inherited.
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
handle_stop_signals()
try:
    import halfway
    time.sleep(5)
    print("not interrupted")
except KeyboardInterrupt:
    module = sys.modules.get("halfway")
    print("interrupted", module is not None, getattr(module, "DONE", False))
"""


# The same SIGTERM, and the command stops on it (as a grade's engine does at its next
# check) before the import's deferred signal is sent again: its clean-up then runs
# whole. The signal sent again once cut a grade's clean-up short, leaving its
# scratch folder behind.
STOPPED_BEFORE_THE_SIGNAL_IS_SENT_AGAIN = """
import sys, time
sys.path.insert(0, sys.argv[1])
from grader.grading.engine import ctrl_c
from grader.learner.output import handle_stop_signals

handle_stop_signals()
try:
    import halfway
    ctrl_c.stop()
except KeyboardInterrupt:
    try:
        time.sleep(0.5)  # ten times the delay before the signal is sent again
        print("cleaned up", ctrl_c.terminated())
    except KeyboardInterrupt:
        print("cut short")
"""


@pytest.mark.parametrize(("script", "sent"),
                         [(CUT_IMPORT, "SIGTERM"), (CUT_IMPORT, "SIGINT"),
                          (STOPPED_BEFORE_THE_SIGNAL_IS_SENT_AGAIN, "SIGTERM")],
                         ids=["interrupted after", "ctrl-c interrupts after",
                              "stopped before it is sent again"])
def test_a_signal_inside_an_import_is_acted_on_once_the_import_is_done(
        script: str, sent: str, tmp_path) -> None:
    """Inside torch's import, a Ctrl-C was swallowed (torch took numpy as missing) and
    the grade ran on to its time budget; a SIGTERM aborted the process."""
    (tmp_path / "halfway.py").write_text(
        f"import os, signal\nos.kill(os.getpid(), signal.{sent})\n"
        "total = sum(range(100000))  # bytecode for the handler to run in\nDONE = True\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    expected = (["interrupted", "True", "True"] if script is CUT_IMPORT
                else ["cleaned", "up", "True"])
    assert done.stdout.split() == expected, done.stdout + done.stderr


def test_the_handler_is_put_back_and_a_programs_own_left_alone():
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with ctrl_c.remembered():
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

        def programs_own(signum, frame):
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, programs_own)
        with ctrl_c.remembered():
            assert signal.getsignal(signal.SIGINT) is programs_own
        assert signal.getsignal(signal.SIGINT) is programs_own
        assert not ctrl_c.pressed()
    finally:
        signal.signal(signal.SIGINT, previous)


# A check module that cannot be collected ends pytest's session with Session.Interrupted,
# a KeyboardInterrupt: the grade reported nothing and exited 130, as if stopped.
GRADE_WITH_A_BROKEN_CHECK_MODULE = """
from grader.grading.contracts import contract
from grader.grading.engine.session import grade_problems
from grader.registry import find
from grader.sandbox.host.pool import WorkerPool


def broken(self):
    raise RuntimeError("this check module cannot load")


loads = contract.Contract.__post_init__
contract.Contract.__post_init__ = broken
problem = find("crop-context")
pool = WorkerPool(sandbox=None)
try:
    report = grade_problems({problem: problem.reference}, pool)
    print("broken:", "graded", report.internal_errors)
except KeyboardInterrupt:
    print("broken:", "stopped")
finally:
    pool.close()
    contract.Contract.__post_init__ = loads
"""


# Last, as it ends the process's command for good: a SIGTERM (a CI job's time limit)
# whose KeyboardInterrupt a finaliser swallows before the grade starts. The grade ran
# to its end, as long as its time budget allowed: now it stops before its first check.
GRADE_AFTER_A_SWALLOWED_SIGTERM = """
from grader.learner.output import handle_stop_signals

plugin.GradingPlugin._record = record
handle_stop_signals()
swallowed[:] = []


class EndedInAFinaliser:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        sum(range(1000))  # bytecode for the handler to run in


EndedInAFinaliser()
print("terminated:", graded_or_stopped(problem), swallowed)
"""


@pytest.fixture(scope="module")
def both_grades() -> subprocess.CompletedProcess[str]:
    """Both grades above in one interpreter, each with a pool of its own: torch is
    imported once for the two. The broken check module's comes first, since a check
    module loaded by the other grade would not be loaded again; the module it could not
    load is loaded afresh by the second grade, and the first grade's patch is undone."""
    return subprocess.run(
        [sys.executable, "-c", GRADE_WITH_A_BROKEN_CHECK_MODULE + GRADE_WITH_A_SWALLOWED_CTRL_C
         + GRADE_AFTER_A_SWALLOWED_SIGTERM],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)


def said_after(label: str, done: subprocess.CompletedProcess[str]) -> str:
    """What the grade labelled `label` printed, or all that was printed and its errors."""
    lines = [line for line in done.stdout.splitlines() if line.startswith(label)]
    assert len(lines) == 1, (done.stdout, done.stderr[-3000:])
    return lines[0].removeprefix(label).strip()


def test_a_check_module_that_cannot_load_is_a_grader_error_not_a_ctrl_c(
        both_grades: subprocess.CompletedProcess[str]) -> None:
    said = said_after("broken:", both_grades)
    assert said.startswith("graded"), both_grades.stdout + both_grades.stderr
    assert "this check module cannot load" in said, both_grades.stdout
