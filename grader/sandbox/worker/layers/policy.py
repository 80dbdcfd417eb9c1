"""What a sandboxed worker may do (`Policy`), and the environment it runs in."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.locale import language
from grader.sandbox.wire.limits import DEFAULTS, MB
from grader.sandbox.worker.layers.readable import (
    grader_private_paths,
    inside,
    learner_problems_folder,
    readable_paths_for_python,
)


def clean_environment(scratch: str | os.PathLike[str] | None = None,
                      extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: nothing of the grader's leaks, and one thread per pool."""
    home = os.fspath(scratch) if scratch is not None else "/nonexistent"
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": home,
        "TMPDIR": home,
        "XDG_CACHE_HOME": home,
        "MPLCONFIGDIR": home,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        # The learner's language, a code the kata speaks and nothing else: what the
        # worker says of their code (a limit reached, a class missing) reads in it.
        "GPT_KATA_LANG": language(),
    }
    env.update(extra or {})
    return env


@dataclass
class Policy:
    """What a sandboxed child may do. ``None`` leaves a limit as it is.

    ``memory_bytes`` is the headroom above what the process has already mapped when
    ``isolate()`` runs: a child forked from a fork server that imported torch
    starts with about 220 MB of private data and 640 MB of address space, none
    of which the submission should be charged for.
    ``max_processes`` likewise counts tasks (processes and threads) beyond those
    the same user already runs, because RLIMIT_NPROC is per user, not per process.
    """

    readable: list[str] = field(default_factory=list)
    scratch: str | None = None
    memory_bytes: int | None = DEFAULTS.memory_bytes
    cpu_seconds: int | None = 120
    max_processes: int | None = 16
    max_file_bytes: int | None = 64 * MB
    max_open_files: int | None = 256
    # Whether programs under the readable paths may be executed. Nothing the worker
    # does needs execve (shared libraries need only read access), so by default a
    # submission cannot start a shell or any other program.
    allow_exec: bool = False
    # Replaces os.environ in the child when set.
    environment: dict[str, str] | None = None
    # Forbid creating sockets (the channel to the grader already exists), and memfd
    # files and changes of user or group id with them.
    forbid_sockets: bool = True
    # The cgroups to join, by the layer each stands for (`TreeLimits.request()`).
    cgroups: dict[str, str] | None = None
    # The size of the tmpfs mounted over scratch; None leaves scratch as it is.
    scratch_bytes: int | None = None
    # Said by the grader, which started the fork server: the workers' real uid is
    # not 0 (inside a user namespace that cannot be seen from the worker).
    unprivileged_uid: bool = False

    @classmethod
    def for_submission(cls, submission: str | os.PathLike[str],
                       scratch: str | os.PathLike[str], **limits: Any) -> Policy:
        """Readable: Python and its packages, and the submission's own folder.

        Where that folder holds (or is) one of the grader's private folders, only
        the submission file itself is readable. Where it is an NN-slug folder of
        a learner's problems/ folder, that problems/ folder is readable as a
        whole, so that a solution can use the learner's earlier ones
        (`grader.reuse.solution_of`); never one of the grader's own.
        """
        path = Path(submission).resolve()
        folder = path if path.is_dir() else path.parent
        private = [Path(p) for p in grader_private_paths()]
        if any(inside(p, folder) for p in private):
            folder = path
        elif (problems := learner_problems_folder(folder, private)) is not None:
            folder = problems
        scratch = os.fspath(scratch)
        return cls(readable=[*readable_paths_for_python(), str(folder)], scratch=scratch,
                   environment=clean_environment(scratch), **limits)
