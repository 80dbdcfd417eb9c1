"""The pytest plugin that turns check modules into a learner's grade.

It provides the `kata` fixture (one per problem), stops grading a problem whose
submission cannot run at all, and records every test as a plain result with a
learner-facing message instead of a traceback.
"""

from __future__ import annotations

import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pytest

from grader import paths
from grader.grading.contracts.contract_validation import CheckModule
from grader.grading.engine import ctrl_c
from grader.grading.subject.kata import Kata
from grader.grading.subject.reference import load_reference
from grader.grading.values.failures import (
    BUSY,
    GRADER_ERROR,
    STUCK,
    GradeFailure,
    GraderIntegrityError,
    SubmissionUnavailable,
)
from grader.grading.values.worker_errors import one_line, unavailable_kind
from grader.importing import freeze_imports
from grader.locale import tr
from grader.registry import Problem
from grader.reports.results import TestResult

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess
from grader.sandbox.wire.limits import DEFAULTS, Limits
from grader.sandbox.wire.printed import Printed, clip, joined

# What one check's calls printed, kept whole up to this many characters (the
# report cuts it at a line end to show it); the worker keeps CALL_OUTPUT_LIMIT
# (grader/sandbox/wire/printed.py) of each call.
CHECK_OUTPUT_LIMIT = 20_000


def cases_of(item: pytest.Item) -> str:
    """What a check runs: "fixed" cases, "drawn" examples, or "" for anything else."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and "case_id" in callspec.params:
        return "fixed"
    if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
        return "drawn"
    return ""


@dataclass
class GradingPlugin:
    """Grades each problem's submission file with that problem's check module."""

    submissions: dict[str, Path]  # problem slug -> file
    problems: dict[str, Problem]
    pool: WorkerPool
    limits: Limits = DEFAULTS
    results: list[TestResult] = field(default_factory=list)
    katas: dict[str, Kata] = field(default_factory=dict)
    internal_errors: list[str] = field(default_factory=list)
    # Workers of problems whose checks are done, ended in the background: ending one
    # takes the fork server about 10 ms (its PID namespace torn down), which the
    # grader spends on the next problem instead of waiting.
    _ender: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1))
    _ending: dict[str, Future] = field(default_factory=dict)
    # A grade shared with a helper process (grader/grading/engine/helpers.py): each
    # problem is graded by whichever process claims it first, this one from the
    # kata's start or, `backwards`, from its end. None grades every problem.
    share: Share | None = None
    claimed: dict[str, bool] = field(default_factory=dict)  # slug -> graded here
    interrupted: bool = False  # Ctrl-C stopped the checks

    def kata_for(self, slug: str, witnessed: bool = False) -> Kata:
        if slug not in self.katas:
            problem = self.problems[slug]
            process = SubmissionProcess(str(self.submissions[slug]), problem.class_name,
                                        list(problem.methods), self.pool, self.limits, witnessed,
                                        module=problem.module is not None,
                                        models=problem.takes_model, trains=problem.trains)
            kata = Kata(problem, process, load_reference(problem),
                        starter=problem.is_its_starter(self.submissions[slug]))
            error = process.load()
            if error:
                kata.unavailable = one_line(error)
                kata.unavailable_kind = unavailable_kind(error)
            self.katas[slug] = kata
        return self.katas[slug]

    @pytest.fixture
    def kata(self, request: pytest.FixtureRequest) -> Kata:
        contract = request.module.CONTRACT
        kata = self.kata_for(contract.problem, contract.witness_model_calls)
        kata.stuck = None
        if kata.unavailable:
            raise SubmissionUnavailable(kata.unavailable, kind=kata.unavailable_kind)
        if kata.submission.timed_out:
            raise NotRun(tr("not run: {reason}, in an earlier check of this problem",
                            reason=kata.submission.timed_out),
                         kind=BUSY if kata.submission.timed_out_busy else STUCK)
        return kata

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if self.share is not None and self.share.backwards:
            # Each module's checks in their own order, the modules from the last problem.
            number = {slug: p.number for slug, p in self.problems.items()}
            items.sort(key=lambda item: -number[item.module.CONTRACT.problem])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        """Stop at a Ctrl-C whose KeyboardInterrupt a finaliser swallowed; skip the
        checks of a problem the other process of a shared grade claimed."""
        if ctrl_c.pressed():
            ctrl_c.stop()
        if self.share is None:
            return None
        slug = item.module.CONTRACT.problem
        if slug not in self.claimed:
            self.claimed[slug] = self.share.claim(slug)
        return None if self.claimed[slug] else True

    def graded_here(self, slug: str) -> bool:
        return self.share is None or self.claimed.get(slug, False)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo) -> pytest.TestReport | None:
        # pytest renders every failure as a traceback with source, about 15 ms each;
        # a learner's failure is reported by its own message, so that work is skipped.
        # Anything else (a bug in the grader) keeps pytest's full rendering.
        if call.excinfo is None or not isinstance(unwrap(call.excinfo.value), LEARNER_FAILURES):
            return None
        return pytest.TestReport(item.nodeid, item.location, dict.fromkeys(item.keywords, 1),
                                 "failed", str(call.excinfo.value), call.when,
                                 duration=call.duration, start=call.start, stop=call.stop,
                                 user_properties=item.user_properties)

    @pytest.hookimpl(hookwrapper=True, specname="pytest_runtest_makereport")
    def pytest_record_report(self, item: pytest.Item, call: pytest.CallInfo):
        outcome = yield
        report = outcome.get_result()
        if call.when == "call" or (call.when == "setup" and report.failed):
            self._record(item, call, report)

    def _record(self, item: pytest.Item, call: pytest.CallInfo, report: pytest.TestReport) -> None:
        slug = item.module.CONTRACT.problem
        problem = self.problems[slug]
        kata = self.katas.get(slug)
        output = clip(joined(kata.outputs), CHECK_OUTPUT_LIMIT) if kata else Printed()
        if kata:
            kata.outputs.clear()
        result = TestResult(test_name(item), problem, "pass", output=output,
                            test_code=(item.function.__doc__ or "").strip(),
                            cases=cases_of(item))
        if report.passed:
            self.results.append(result)
            return
        exc = unwrap(call.excinfo.value) if call.excinfo else None
        if isinstance(exc, GradeFailure) and exc.output is not None:
            # Only the failing call's own output: a test of many examples would
            # otherwise show what the passing ones printed as well.
            result.output = clip(exc.output, CHECK_OUTPUT_LIMIT)
        if isinstance(exc, (NotRun, SubmissionUnavailable)):
            result.status = "fail" if isinstance(exc, NotRun) else "error"
            result.message, result.kind = str(exc), exc.kind
        elif isinstance(exc, GradeFailure):
            result.status, result.kind = "fail", exc.kind
            diagnosis = exc.diagnosis
            said = diagnosis.says
            result.message = with_inputs(said, exc)
            result.alike = said if exc.case_id else result.message
            result.hint = "\n".join(diagnosis.hints)
            mistake = diagnosis.mistake
            result.mistake = mistake.named(slug) if mistake else None
            result.arguments, result.got = exc.arguments, exc.got
        elif isinstance(exc, GraderIntegrityError):
            result.status, result.message, result.kind = "error", str(exc), GRADER_ERROR
            self.internal_errors.append(str(exc))
        else:
            # A bug in the grader itself: never blame the learner for it.
            result.status, result.kind = "error", GRADER_ERROR
            result.message = tr("internal grader error: {kind}: {error}",
                                kind=type(exc).__name__, error=exc)
            self.internal_errors.append(f"{item.nodeid}: {report.longreprtext}")
        if not result.alike:
            result.alike = result.message
        self.results.append(result)

    def pytest_pycollect_makemodule(self, module_path: Path,
                                    parent: pytest.Collector) -> pytest.Module:
        # A check module's contract is validated as the module is collected.
        return CheckModule.from_parent(parent, path=module_path)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.internal_errors.append(f"could not load checks {report.nodeid}: "
                                        f"{report.longreprtext}")

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        # One check module per problem, run in turn: once the next test is another
        # module's (or there is none), this problem's worker is not called again.
        if nextitem is not None and nextitem.module is item.module:
            return
        slug = item.module.CONTRACT.problem
        if slug not in self.katas or slug in self._ending:
            return
        submission = self.katas[slug].submission
        # A host that serves every problem in turn (the spawned path) is not ended:
        # the next problem takes it over as it is, and the session's end ends it.
        # Ended here, it would be killed under the next problem's load.
        if not submission.shares_its_worker:
            self._ending[slug] = self._ender.submit(submission.close)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        # pytest ends the session on Ctrl-C and returns; the grade must stop as well.
        # It ends it the same way (Session.Interrupted, a KeyboardInterrupt) when a
        # check module could not be collected: that is the grader's error, recorded
        # by pytest_collectreport, and the grade says so instead of stopping silently.
        self.interrupted = not isinstance(excinfo.value, pytest.Session.Interrupted)

    def pytest_sessionfinish(self) -> None:
        for slug, kata in self.katas.items():
            if slug not in self._ending:
                kata.submission.close()
        self._ender.shutdown(wait=True)
        for ending in self._ending.values():
            ending.result()  # a failure to end one is the grader's, and is not hidden


class Share(Protocol):
    """This process's part of a shared grade (grader/grading/engine/helpers.py)."""

    backwards: bool  # claims from the last problem down

    def claim(self, slug: str) -> bool:
        """Whether this process grades the problem, asked once per problem, in order."""


class NotRun(GradeFailure):
    """A check skipped because an earlier one of its problem ran out of time."""

    kind = STUCK


# Failures that are the submission's, reported by their own message.
LEARNER_FAILURES = (GradeFailure, SubmissionUnavailable)


def unwrap(exc: BaseException) -> BaseException:
    """The first grading failure inside an exception group (hypothesis raises those)."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = unwrap(inner)
            if isinstance(found, GradeFailure):
                return found
    return exc


def with_inputs(message: str, exc: BaseException) -> str:
    """The failure's message, plus the failing call's inputs.

    A contract's check shows its call's arguments in the learner's terms
    (grader/grading/subject/inputs.py). Only a test that draws its own examples falls
    back on hypothesis' notes of what it drew.
    """
    inputs = getattr(exc, "inputs", None)
    if inputs:
        return f"{message}\n{inputs}"
    # Whatever names a grader object (the kata, a worker) is no input of the learner's.
    # hypothesis' notes are its own text, not the grader's: they are read as it writes them.
    notes = [str(n) for n in getattr(exc, "__notes__", [])
             if not any(mark in str(n) for mark in GRADER_OBJECTS)]
    draws = [n for n in notes if n.startswith("Draw ")]
    example = [n for n in notes if n.startswith(("Failing test case", "Falsifying example"))]
    if draws:
        message += "\n" + tr("smallest failing input found:") + "\n  " + "\n  ".join(draws)
    elif example and "data=data(" not in example[0]:
        message += ("\n" + tr("smallest failing input found:") + "\n  "
                    + example[0].split(":", 1)[1].strip())
    return message


GRADER_OBJECTS = (" object at 0x", "kata=", "Kata(", "SubmissionProcess")


def test_name(item: pytest.Item) -> str:
    doc = (getattr(item, "function", None).__doc__ or "").strip().splitlines()
    name = doc[0].rstrip(".") if doc else item.name
    callspec = getattr(item, "callspec", None)
    return f"{name} [{callspec.id}]" if callspec else name


# pytest's builtin plugins a grade does without; it keeps the essential ones, python,
# capture, skipping, assertion and reports. The unraisable- and thread-exception
# plugins end every session with several full garbage collections, longer than a
# passing problem's checks; the others cost imports (pdb, xml) and hooks no check uses.
UNUSED_PLUGINS = ("cacheprovider", "terminal", "warnings", "logging", "unraisableexception",
                  "threadexception", "debugging", "unittest", "legacypath", "tmpdir",
                  "monkeypatch", "recwarn", "pastebin", "junitxml", "doctest", "setuponly",
                  "setupplan", "stepwise", "faulthandler", "subtests")


def run_checks(plugin: GradingPlugin, problems: list[Problem]) -> int:
    """Run the problems' check modules in this process; pytest's exit code."""
    args = [str(p.checks) for p in problems]
    # Third-party plugins in the learner's environment (random ordering, reruns,
    # timeouts...) must not change a grade.
    # The rootdir and ini are the checks' common folder: one grade may run the
    # checks of several tracks, each in a folder of its own.
    args += ["--disable-plugin-autoload", "--rootdir", str(paths.CHECKS),
             "-c", str(paths.CHECKS / "pytest.ini"), "--capture=sys", "--assert=plain"]
    args += [arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]
    import torch

    torch.set_num_threads(1)  # tiny tensors: threads cost more than they give
    freeze_imports()  # a caller that imported them without without_collections()
    old_modules = set(sys.modules)
    try:
        with ctrl_c.remembered():
            code = int(pytest.main(args, plugins=[plugin]))
        if plugin.interrupted or ctrl_c.pressed():
            # Stopped by the learner: no grade, not a grader error (the CLI exits 130).
            ctrl_c.stop()
        if code not in (0, 1):
            plugin.internal_errors.append(tr("the checks could not run (pytest exit code "
                                             "{code})", code=code))
        return code
    finally:
        # Forget the check modules so a second run in one process collects them afresh.
        for name in set(sys.modules) - old_modules:
            if name.startswith("check_"):
                del sys.modules[name]
