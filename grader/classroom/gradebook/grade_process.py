"""One learner's grade in a process of its own, started warm where the system allows.

On Linux the gradebook imports torch, pytest and the checks once, then forks a
child per learner that runs `gpt-kata grade` from there: the child is this very
grader, and it skips the second or so every fresh Python spends importing
torch. Elsewhere each grade is a fresh `python -m grader grade` of this grader's
(see `grader.sandbox.host.launch`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from typing import NoReturn

from grader.grading.values.sanitise import visible
from grader.learner.output import exit_now
from grader.sandbox.host.ending import Job, start_group, wait_for, wait_then_kill
from grader.sandbox.host.launch import grader_command, neutral_folder
from grader.sandbox.host.pool import SPAWN_VARIABLE
from grader.sandbox.host.scratch_folders import remove_tree

EXIT_CRASH = 70  # the child failed before `grade` could give an exit code
POLL_SECONDS = 0.02


def forking() -> bool:
    # The switch that makes workers spawned makes grades spawned too, to test that path.
    return (sys.platform.startswith("linux") and hasattr(os, "fork")
            and os.environ.get(SPAWN_VARIABLE) != "1")


def warm_up() -> None:
    """Import what a grade needs, before any thread starts and before any fork."""
    from grader.importing import without_collections

    with without_collections():
        import torch

        # No thread pool exists yet; with one thread none will, so forking stays safe.
        torch.set_num_threads(1)
        import grader.grading.engine.session  # noqa: F401
        import grader.reports.junit  # noqa: F401


class GradeProcess:
    """`gpt-kata grade ARGV`, with stdout discarded and stderr in `stderr_path`.

    A forked grade may be given `server_control`, a fork server spawned for it
    (`ForkServerClient.spawn`); the caller closes its own end once this has started.
    Everything the grade writes to temporary files (every worker's scratch
    folder too) is in one folder of its own, removed when it has ended, however
    it ended.
    """

    def __init__(self, argv: list[str], stderr_path: str,
                 server_control: socket.socket | None = None) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.job: Job | None = None
        self.temporary = tempfile.mkdtemp(prefix="gpt-kata-learner-")
        if forking():
            self.pid = os.fork()
            if self.pid == 0:
                _child(argv, stderr_path, server_control, self.temporary)
        else:
            with open(stderr_path, "wb") as stderr:
                # This grader's own `grade`, never one a learner's folder might hold.
                self.process, self.job = start_group(
                    grader_command("grader", "grade", *argv), cwd=neutral_folder(),
                    stdout=subprocess.DEVNULL, stderr=stderr,
                    env={**os.environ, "TMPDIR": self.temporary, "TEMP": self.temporary,
                         "TMP": self.temporary})
            self.pid = self.process.pid

    def wait(self, timeout: float) -> int | None:
        """The exit code, or None if it is still running after `timeout` seconds."""
        if self.process is not None:
            return wait_for(self.process, timeout)[1]
        ended, code = wait_for(self.pid, timeout, poll=POLL_SECONDS)
        if ended:
            self.pid = -1  # reaped: its number may now belong to someone else
        return code

    def kill(self) -> None:
        """End it and everything it started (it leads a session, or a job, of its own),
        and remove its temporary folder."""
        if self.process is not None:
            wait_then_kill(self.process, 0.0, job=self.job, always=True)
        elif self.pid > 0:
            wait_then_kill(self.pid, 0.0, always=True)
            self.pid = -1
        remove_tree(self.temporary)


def _child(argv: list[str], stderr_path: str,
           server_control: socket.socket | None, temporary: str) -> NoReturn:
    code = EXIT_CRASH
    try:
        os.setsid()
        # tempfile caches its folder: set both, for this process and what it starts.
        os.environ["TMPDIR"] = tempfile.tempdir = temporary
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        quiet = os.open(os.devnull, os.O_WRONLY)
        errors = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(quiet, 1)
        os.dup2(errors, 2)
        # New stream objects: another thread of the parent (the progress bar) may
        # have held the old ones' locks at the moment of the fork.
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        from grader.learner.errors import EXIT_USAGE, UsageError
        from grader.learner.grade import grade, grade_parser

        try:
            code = grade(grade_parser().parse_args(argv), server_control)
        except UsageError as exc:
            print(f"gpt-kata grade: {visible(exc, lines=True)}", file=sys.stderr)
            code = EXIT_USAGE
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return
        traceback.print_exc()
    finally:
        # Its workers have ended with its pool: what is left is removed now, in
        # case the gradebook itself is gone.
        remove_tree(temporary)
        exit_now(code)
