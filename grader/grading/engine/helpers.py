"""A grade of many problems shared with a helper process, where the system forks.

Most of a grade's time is spent in the grader's own process, not in the
workers: it runs the reference for every call, judges, and serves the model
that witnessed calls read. A grade of all 35 references kept one core busy and
the other mostly idle (11.3 s of wall time for 15.3 CPU-seconds on two cores,
all processes counted). So, on Linux, once the grader has imported torch, pytest
and the checks' machinery, it forks a helper, with a fork server of its own
(forked from the grade's, in milliseconds, with its sandbox): the grader grades
from the kata's first problem on, the helper from its last one back, until they
meet (Claims); the helper hands back its report. The helper is this very grader,
warm: it imports nothing.

Which process grades a problem changes nothing in its grade: each problem has
its own worker and reference, and every drawn example is derandomized per check.
A helper that fails in any way is made good by grading its problems here, after
the grader's own: a grade can be slower, never lost. Ctrl-C stops both.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import sys
import tempfile
import threading
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NoReturn

from grader.grading.engine import ctrl_c
from grader.registry import Problem
from grader.reports.report import Report
from grader.sandbox.host.channel import WorkerDied, close_quietly
from grader.sandbox.host.pool import Load, WorkerPool
from grader.sandbox.wire.limits import Limits

# Fewer problems than this, untouched starters aside, are graded in one process: a
# helper's fork server and first worker cost about 0.1 s, more than sharing two or
# three problems saves.
FEWEST_TO_SHARE = 4
# How long a spawned fork server is given to end once its helper is done.
SERVER_GRACE = 2.0


def load_of(problem: Problem, submission: Path) -> Load:
    """What a worker loads to grade `submission` for `problem`."""
    return Load.of(str(submission), problem.class_name, problem.methods,
                   problem.module is not None, problem.takes_model, problem.trains)


def prepare(pool: WorkerPool, submissions: dict[Problem, Path]) -> None:
    """Have the pool start each problem's worker ahead of its first check, in order."""
    pool.prepare([load_of(p, f) for p, f in sorted(submissions.items(),
                                                    key=lambda item: item[0].number)])


def can_share(pool: WorkerPool, submissions: dict[Problem, Path], processes: int) -> bool:
    """Whether this grade is shared with a helper: two processes allowed, enough
    problems beyond their starters, and a fork server to spawn the helper's from
    (Linux's fork path)."""
    if processes < 2 or not (hasattr(os, "fork") and pool.use_fork and pool.server is not None):
        return False
    # A starter's grade takes milliseconds, and a helper would cost more than it
    # saves: all 35 starters took 3.0 s shared against 2.8 s alone, as each process
    # collects every check module.
    begun = [p for p, f in submissions.items() if not p.is_its_starter(f)]
    return len(begun) >= FEWEST_TO_SHARE


class Claims:
    """Which problems of a shared grade are taken, in the kata's order: the grader
    takes them from the start and the helper from the end, each the next one as it
    goes, until they meet. Neighbours stay in one process, where the memo of the
    models they share serves them (shares of every other problem cost 2 CPU-seconds
    more for all 35 references); and whichever process is ahead takes more."""

    def __init__(self, count: int) -> None:
        import multiprocessing

        # In memory the helper shares: it is forked after this is made.
        self.ends = multiprocessing.get_context("fork").Array("i", [0, count])

    def take(self, index: int, backwards: bool) -> bool:
        """Take the problem at `index` if it is the next one from this end."""
        with self.ends.get_lock():
            low, high = self.ends[0], self.ends[1]
            if low >= high or index != (high - 1 if backwards else low):
                return False
            self.ends[1 if backwards else 0] = index + (0 if backwards else 1)
            return True

    def left(self) -> int:
        """How many problems neither process has taken."""
        with self.ends.get_lock():
            return max(0, self.ends[1] - self.ends[0])

    def taken_from_the_end(self) -> int:
        """The index of the first problem the helper took (the count if none)."""
        with self.ends.get_lock():
            return self.ends[1]


@dataclass
class OneEnd:
    """A process's part of a shared grade: it takes each problem from its end as it
    comes to it, and has the next one's worker started meanwhile, without taking it.

    Taking the next one ahead would keep it from the other process: near the meeting
    point, a problem taken ahead by the busier process kept the other idle for as
    long as the problem took (1.0 s of a grade of all 35 references). A worker started
    for a problem the other process takes is ended with the pool, unused.
    """

    claims: Claims
    order: list[tuple[Problem, Path]]  # every problem of the grade, in the kata's order
    pool: WorkerPool
    backwards: bool
    prepared: set[int] = field(default_factory=set)
    index: dict[str, int] = field(init=False)  # slug -> its place in `order`

    def __post_init__(self) -> None:
        self.index = {problem.slug: i for i, (problem, _) in enumerate(self.order)}

    def start(self) -> None:
        self._prepare(len(self.order) - 1 if self.backwards else 0)

    def claim(self, slug: str) -> bool:
        index = self.index[slug]
        if not self.claims.take(index, self.backwards):
            return False  # the other process took it
        self._prepare(index)  # started already, unless the other took the one before
        if self.claims.left():
            self._prepare(index - 1 if self.backwards else index + 1)
        return True

    def _prepare(self, index: int) -> None:
        if 0 <= index < len(self.order) and index not in self.prepared:
            self.prepared.add(index)
            problem, submission = self.order[index]
            prepare(self.pool, {problem: submission})


@dataclass
class Helper:
    """A forked grader grading from the end of the kata, and the fork server spawned
    for it."""

    pid: int
    reader: int  # the pipe its report comes back on
    server_pid: int
    interrupted: bool = False  # ended by Ctrl-C (SIGINT), as the grader was

    def outcome(self) -> tuple[Report, bool] | None:
        """Its report and whether its fork server failed, once it has ended; None if
        it ended without one."""
        chunks = []
        with contextlib.suppress(OSError):
            while chunk := os.read(self.reader, 1 << 20):
                chunks.append(chunk)
        self.end()
        try:
            # Pickled by a fork of this very grader (no learner code runs in it).
            kind, report, server_failed = pickle.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001 - a helper that died mid-write left no report
            return None
        return (report, bool(server_failed)) if kind == "report" else None

    def end(self) -> None:
        """Close its pipe and reap it (killing it first if it still runs)."""
        if self.reader >= 0:
            os.close(self.reader)
            self.reader = -1
        if self.pid > 0:
            with contextlib.suppress(OSError):
                ended, status = os.waitpid(self.pid, os.WNOHANG)
                if not ended:
                    os.kill(self.pid, signal.SIGKILL)
                    _, status = os.waitpid(self.pid, 0)
                self.interrupted = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT
            self.pid = -1


def grade_shared(submissions: dict[Problem, Path], pool: WorkerPool,
                 limits: Limits) -> tuple[Report, bool]:
    """The grade of every submission, shared between this process and a helper; and
    whether a fork server (this grade's or the helper's) failed.

    The pool must not have been prepared yet: this process's problems are prepared
    here, once the helper is forked (a fork must happen before any thread starts).
    """
    from grader.grading.engine.session import grade_problems

    order = sorted(submissions.items(), key=lambda item: item[0].number)
    claims = Claims(len(order))
    helper = start_helper(claims, order, pool, limits)
    if helper is None:
        prepare(pool, submissions)
        return grade_problems(submissions, pool, limits), pool.server_failed
    try:
        share = OneEnd(claims, order, pool, backwards=False)
        share.start()
        report = grade_problems(submissions, pool, limits, share)
        server_failed = pool.server_failed
        outcome = helper.outcome()
        if pool.server is not None:
            pool.server.end(helper.server_pid, SERVER_GRACE)
        helpers_part = dict(order[claims.taken_from_the_end():])
        if outcome is None and helper.interrupted:
            ctrl_c.stop()  # Ctrl-C reached the helper first: the grade stops
        if outcome is None and not helpers_part:
            outcome = replace(report, summaries=[], internal_errors=[]), False  # none taken
        elif outcome is None:
            # Graded here instead, by the same checks: nothing is lost.
            outcome = grade_problems(helpers_part, pool, limits), pool.server_failed
        return merged(report, outcome[0]), server_failed or outcome[1]
    finally:
        helper.end()


def start_helper(claims: Claims, order: list[tuple[Problem, Path]], pool: WorkerPool,
                 limits: Limits) -> Helper | None:
    """The helper, grading from the end of the kata; None if it cannot be started."""
    import torch

    # Forking is only safe while this process runs one thread; torch's own pool of
    # threads is not started with one thread (and the checks use one).
    torch.set_num_threads(1)
    server = pool.server
    if server is None or threading.active_count() > 1:
        return None
    try:
        control, server_pid = server.spawn()
    except (WorkerDied, OSError, ValueError, KeyError):
        return None
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the helper; its report is what the tests see
        os.close(reader)
        _help(claims, order, control, writer, pool, limits)
    control.close()
    os.close(writer)
    return Helper(pid, reader, server_pid)


def _help(claims: Claims, order: list[tuple[Problem, Path]], control: socket.socket,
          writer: int, parent_pool: WorkerPool, limits: Limits) -> NoReturn:  # pragma: no cover
    """A helper's whole life: grade from the end until it meets the grader, write
    the report, exit."""
    payload: tuple = ("crash", "", False)
    try:
        # Ctrl-C ends the helper at once; the grader cleans up after it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if parent_pool.server is not None:
            # Its workers' scratch folders go in the grade's, which the grader removes
            # however it ends (its fork server, if the grader is killed): a scratch root
            # of the helper's own was left behind by every Ctrl-C.
            os.environ["TMPDIR"] = tempfile.tempdir = parent_pool.server.scratch_root
            # The grader's link to its fork server is the grader's alone.
            close_quietly(parent_pool.server.replies, parent_pool.server.control)
        pool = WorkerPool(debug=parent_pool.debug, fork=True, sandbox=parent_pool.sandbox,
                          server_control=control, forwards=parent_pool.forwards)
        try:
            from grader.grading.engine.session import grade_problems

            pool.start()
            share = OneEnd(claims, order, pool, backwards=True)
            share.start()
            report = grade_problems(dict(order), pool, limits, share)
            payload = ("report", report, pool.server_failed)
        finally:
            pool.close()
        # Its share's passes, before the grader reads the report and saves its own.
        from grader.model import forward_store

        if (store := forward_store.in_use()) is not None:
            store.save()
    except BaseException:  # noqa: BLE001 - whatever happens, the helper must not return
        payload = ("crash", traceback.format_exc() if parent_pool.debug else "", False)
    finally:
        try:
            data = pickle.dumps(payload)
            with os.fdopen(writer, "wb") as pipe:
                pipe.write(data)
        except BaseException:  # noqa: BLE001
            pass
        if payload[0] == "crash" and payload[1]:
            sys.stderr.write(f"gpt-kata: a grading helper failed:\n{payload[1]}")
        os._exit(0)


def merged(first: Report, other: Report) -> Report:
    """One report of two shares of a grade, its problems in the kata's order."""
    summaries = sorted([*first.summaries, *other.summaries], key=lambda s: s.problem.number)
    return replace(first, summaries=summaries,
                   internal_errors=[*first.internal_errors, *other.internal_errors],
                   isolation=common(first.isolation, other.isolation))


def common(first: list[str], other: list[str]) -> list[str]:
    """The sandbox layers the shares' workers ran under: the same unless the machine
    changed mid-grade, and then only what both had is claimed. A share none of whose
    workers said (none started) leaves the other's, as one process's grade would."""
    if not first or not other:
        return list(first or other)
    return [layer for layer in first if layer in other]
