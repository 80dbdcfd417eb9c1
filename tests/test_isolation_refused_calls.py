"""A call the seccomp filter refuses fails naming the sandbox's rule, as a limit reached
is named: a bare "Operation not permitted" sends the learner looking for a bug.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_isolation import ISO, run_isolated

from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess
from grader.sandbox.wire.limits import Limits
from grader.sandbox.worker.describe import limit_message
from grader.sandbox.worker.layers.policy import Policy
from grader.sandbox.worker.layers.seccomp import refused_call

needs_seccomp = pytest.mark.skipif(not ISO.seccomp, reason="no seccomp filter for this machine")

# Written to a file in scratch and imported: a message names the call from its line.
CALLS = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def memfd():
    os.memfd_create("held")
def shm():
    if libc.shmget(0, 1 << 20, 0o1600) < 0: raise OSError(ctypes.get_errno(), "shmget failed")
def queue():
    if libc.msgget(0, 0o1600) < 0: raise OSError(ctypes.get_errno(), "msgget failed")
def setuid():
    os.setuid(0)
"""
REFUSED = f"""
with open("calls.py", "w") as handle:
    handle.write({CALLS!r})
sys.path.insert(0, os.getcwd())
import calls
for name in ("memfd", "shm", "queue", "setuid"):
    attempt(name, getattr(calls, name))
"""


@needs_seccomp
def test_memfd_and_system_v_refusals_name_the_seccomp_rule(tmp_path: Path) -> None:
    result = run_isolated(REFUSED, tmp_path, memory_bytes=None)
    for name, call in (("memfd", "memfd_create"), ("shm", "shmget"), ("queue", "msgget")):
        outcome = result[name]
        assert isinstance(outcome, dict) and outcome["errno"] == errno.EPERM, (name, outcome)
        message = outcome["message"] or ""
        assert f"the sandbox refused {call}(): its seccomp filter" in message, message
        assert "no limit counts" in message, message
    assert "no change of user or group id" in (result["setuid"]["message"] or "")


def raised(code: str, tmp_path: Path) -> BaseException:
    """What running `code` from a file raises (a traceback's lines are read from files)."""
    source = tmp_path / f"code{len(list(tmp_path.iterdir()))}.py"
    source.write_text(code)
    try:
        exec(compile(code, str(source), "exec"), {})
    except BaseException as exc:  # noqa: BLE001 - the exception is what is looked at
        return exc
    raise AssertionError("nothing was raised")


def test_only_an_eperm_from_a_refused_call_is_named(tmp_path: Path) -> None:
    assert refused_call(PermissionError(errno.EPERM, "no")) is None  # never raised: no line
    assert refused_call(raised("raise OSError(1, 'x')  # not a refused call\n", tmp_path)) is None
    assert refused_call(raised("raise OSError(2, 'memfd_create')\n", tmp_path)) is None  # ENOENT
    exc = raised("raise OSError(1, 'memfd_create')\n", tmp_path)
    named = refused_call(exc)
    assert named is not None and named.startswith("the sandbox refused memfd_create()"), named
    # Only where the sandbox has the filter.
    assert limit_message(Policy(forbid_sockets=False), exc) is None
    assert limit_message(Policy(), exc) == named


SOLUTION = """
import ctypes, os

class Solution:
    def memfd(self):
        return os.memfd_create("held")

    def shm(self):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.shmget(0, 1 << 20, 0o1600) < 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number) + " (shmget)")
"""


@pytest.fixture
def graded(tmp_path: Path) -> Iterator[SubmissionProcess]:
    (tmp_path / "solution.py").write_text(SOLUTION)
    pool = WorkerPool(sandbox=Limits())
    process = SubmissionProcess(str(tmp_path / "solution.py"), "Solution", ["memfd", "shm"],
                                pool, Limits(call_timeout=120, problem_budget=300))
    yield process
    process.close()
    pool.close()


@needs_seccomp
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
def test_a_graded_call_that_makes_a_memfd_fails_naming_the_rule(graded) -> None:
    for method, call in (("memfd", "memfd_create"), ("shm", "shmget")):
        outcome = graded.call(method, ())
        message = (outcome.error or {}).get("message") or ""
        assert f"the sandbox refused {call}(): its seccomp filter" in message, message
        assert "Operation not permitted" in message  # the system's own words stay
