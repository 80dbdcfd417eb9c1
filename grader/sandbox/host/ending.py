"""Ending a process with everything it started, and saying how a process ended, per platform.

On POSIX a process the grader starts leads a session of its own, so killing its
process group ends what it started too. Windows has no process groups in that
sense: there the process is put in a job object that kills every process in
it when the job is terminated or its last handle closes; `taskkill /T` (the
process's tree, as far as Windows still knows it) is the fallback where a job
cannot be made. `wait_then_kill` is the one way the grader ends a process: wait
for it with a deadline, then kill its group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from typing import Any

from grader.locale import tr

WINDOWS = sys.platform == "win32"


def windows_crashes() -> dict[int, str]:
    """NTSTATUS codes a crashed Windows process exits with, as Python reports them
    (unsigned 32-bit numbers), each with what it is, in the language in use."""
    return {
        0xC0000005: tr("an access violation (a crash in native code)"),
        0xC00000FD: tr("a stack overflow (runaway recursion?)"),
        0xC0000409: tr("a stack buffer overrun or a fail-fast exit (a crash in native code)"),
        0xC0000374: tr("a corrupted heap (a crash in native code)"),
        0xC0000017: tr("running out of memory"),
        0xC000001D: tr("an illegal instruction"),
        0xC0000094: tr("an integer division by zero in native code"),
        0xC000013A: tr("Ctrl-C or the console closing"),
    }


def signal_causes() -> dict[str, str]:
    """Why a POSIX process may have received each signal, for a learner's eyes."""
    return {
        "SIGKILL": tr("out of memory, a limit reached, or ended from outside"),
        "SIGSEGV": tr("a crash in native code"),
        "SIGBUS": tr("a crash in native code"),
        "SIGABRT": tr("an abort, often a failed check in native code"),
        "SIGFPE": tr("an arithmetic error in native code"),
        "SIGILL": tr("an illegal instruction"),
        "SIGXCPU": tr("the CPU time limit"),
        "SIGXFSZ": tr("the file size limit"),
        "SIGSYS": tr("a system call the sandbox forbids"),
        "SIGTERM": tr("ended from outside"),
        "SIGPIPE": tr("writing to a closed pipe"),
    }


def describe_exit(code: int | None, platform: str = sys.platform) -> str:
    """How a worker ended, from its exit code as `subprocess` reports it there."""
    if code is None:
        return tr("the worker stopped answering")
    if platform == "win32":
        status = code & 0xFFFFFFFF
        crashes = windows_crashes()
        if status in crashes:
            return tr("the process crashed with {crash} (exit status 0x{status:08X})",
                      crash=crashes[status], status=status)
        if status >= 0xC0000000:
            return tr("the process crashed (Windows exit status 0x{status:08X})",
                      status=status)
    elif code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return tr("the process was killed by signal {number} (a crash, or out of memory)",
                      number=-code)
        cause = signal_causes().get(name) or tr("a crash, or out of memory")
        return tr("the process was killed by signal {number}, {name} ({cause})",
                  number=-code, name=name, cause=cause)
    return tr("the process exited with code {code} (sys.exit or os._exit in the submission?)",
              code=code)


def group_options() -> dict[str, Any]:
    """Popen options that give the new process a group of its own to be ended with."""
    if WINDOWS:
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


class Job:
    """A Windows job object that kills its processes when closed; nothing elsewhere."""

    def __init__(self) -> None:
        self.handle: int | None = None
        if not WINDOWS:
            return
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        # Handles are pointer-sized: ctypes' default int would cut them on 64-bit Windows.
        kernel32.CreateJobObjectW.restype = wintypes.HANDLE
        kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, wintypes.LPCWSTR]
        kernel32.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int,
                                                     ctypes.c_void_p, wintypes.DWORD]
        kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
        kernel32.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]
        handle = kernel32.CreateJobObjectW(None, None)
        if not handle:
            return

        class Limits(ctypes.Structure):
            # JOBOBJECT_EXTENDED_LIMIT_INFORMATION, of which only LimitFlags is set.
            _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64),
                        ("PerJobUserTimeLimit", ctypes.c_int64),
                        ("LimitFlags", wintypes.DWORD),
                        ("MinimumWorkingSetSize", ctypes.c_size_t),
                        ("MaximumWorkingSetSize", ctypes.c_size_t),
                        ("ActiveProcessLimit", wintypes.DWORD),
                        ("Affinity", ctypes.c_size_t),
                        ("PriorityClass", wintypes.DWORD),
                        ("SchedulingClass", wintypes.DWORD),
                        ("IoInfo", ctypes.c_uint64 * 6),
                        ("ProcessMemoryLimit", ctypes.c_size_t),
                        ("JobMemoryLimit", ctypes.c_size_t),
                        ("PeakProcessMemoryUsed", ctypes.c_size_t),
                        ("PeakJobMemoryUsed", ctypes.c_size_t)]

        limits = Limits()
        limits.LimitFlags = 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        extended_limit_information = 9
        if not kernel32.SetInformationJobObject(handle, extended_limit_information,
                                                ctypes.byref(limits), ctypes.sizeof(limits)):
            kernel32.CloseHandle(handle)
            return
        self.kernel32, self.handle = kernel32, handle

    def add(self, process: subprocess.Popen) -> bool:
        """Put a just-started process in the job (what it starts later joins it too)."""
        if self.handle is None:
            return False
        return bool(self.kernel32.AssignProcessToJobObject(self.handle, int(process._handle)))  # type: ignore[attr-defined]

    def close(self) -> None:
        """Kill every process in the job."""
        if self.handle is not None:
            self.kernel32.TerminateJobObject(self.handle, 1)
            self.kernel32.CloseHandle(self.handle)
            self.handle = None


def start_group(argv: list[str], **options: Any) -> tuple[subprocess.Popen, Job]:
    """Popen(argv) in a group (a session on POSIX, a job on Windows) of its own."""
    process = subprocess.Popen(argv, **group_options(), **options)
    job = Job()
    job.add(process)
    return process, job


def end_group(process: subprocess.Popen, job: Job | None = None) -> None:
    """Kill `process` and what it started; it need not be waited for yet."""
    if WINDOWS:
        had_job = job is not None and job.handle is not None
        if job is not None:
            job.close()
        if not had_job and process.poll() is None:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(["taskkill", "/F", "/T", "/PID", str(process.pid)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=10)
        with contextlib.suppress(OSError):
            process.kill()
        return
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()


def wait_for(process: subprocess.Popen | int, seconds: float | None,
             poll: float = 0.005) -> tuple[bool, int | None]:
    """Wait up to `seconds` (None: as long as it takes) for `process` (a Popen, or the
    pid of a child of this process) to exit: whether it has (or was reaped already),
    and how it ended."""
    if isinstance(process, subprocess.Popen):
        try:
            return True, process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False, None
    deadline = time.monotonic() + (seconds or 0)
    while True:
        try:
            done, status = os.waitpid(process, 0 if seconds is None else os.WNOHANG)
        except ChildProcessError:
            return True, None  # reaped already
        if done:
            return True, os.waitstatus_to_exitcode(status)  # the code, or -signal
        if time.monotonic() >= deadline:
            return False, None
        time.sleep(poll)


def wait_then_kill(process: subprocess.Popen | int, seconds: float, *, job: Job | None = None,
                   always: bool = False, then_wait: float | None = None) -> int | None:
    """Wait up to `seconds` for `process` (a Popen, or the pid of a child of this
    process that leads a group of its own) to exit; if it has not, or `always`, kill
    its group; then reap it, waiting up to `then_wait` seconds (None: as long as it
    takes). How it ended (see `wait_for`); None where that is not known.

    `always` is for a process whose group may outlive it: what it started is ended
    even when it exited in time.
    """
    ended, code = wait_for(process, seconds)
    if ended and not always:
        return code
    if isinstance(process, subprocess.Popen):
        end_group(process, job)
    else:
        _kill_pid_group(process)
    return code if ended else wait_for(process, then_wait)[1]


def _kill_pid_group(pid: int) -> None:
    """SIGKILL a child's group and the child itself (POSIX: Windows has no groups
    by number, and no child is started by pid there)."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(OSError):
            kill(pid, signal.SIGKILL)
