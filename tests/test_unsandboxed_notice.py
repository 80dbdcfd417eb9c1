"""Every command that runs a learner's code says once, in one line on stderr, when that
code runs without the sandbox or with layers missing (grader/learner/sandbox_notice.py).

Each command runs as a learner runs it, in a kata folder of references recorded as
passed, through a small driver that forces what the test needs first: macOS (the
platform faked for the grader's own modules that ask for it; its workers are then
spawned unisolated, the path macOS and Windows take), the spawned-worker path on Linux
(GPT_KATA_SPAWN_WORKERS=1), or no cgroups for the workers (as
tests/test_limits_tree.py forces them off). Under the full sandbox, nothing is said.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from test_train_yours import record_passing_references

from grader.learner.sandbox_notice import missing_layers, sandbox_notice
from grader.sandbox.host.pool import SPAWN_VARIABLE, WorkerPool
from grader.sandbox.wire.limits import Limits
from grader.sandbox.worker.machine import probe

LINUX = sys.platform.startswith("linux")
pytestmark = pytest.mark.skipif(not LINUX, reason="forces Linux off its sandbox")

DRIVER = '''
import sys

force, argv = sys.argv[1], sys.argv[2:]
if force == "darwin":  # for the grader's own modules: the libraries stay on Linux
    import grader.learner.sandbox_notice
    import grader.sandbox.host.pool

    class Darwin:
        platform = "darwin"

        def __getattr__(self, name):
            return getattr(sys, name)

    grader.sandbox.host.pool.sys = grader.learner.sandbox_notice.sys = Darwin()
elif force == "no-cgroups":
    from grader.sandbox.worker import machine
    from grader.sandbox.worker.layers.cgroups import TreeLimits

    def without_groups(memory_bytes, scratch_bytes=None, **_):
        return TreeLimits(memory_bytes, 16, extra={"scratch_bytes": scratch_bytes})

    machine.worker_limits = without_groups
if "watch" in argv:  # one grade, then the key that quits
    import grader.learner.watch as watch

    watch.key_reader = lambda enabled: (lambda: "q")
from grader.cli.main import main

raise SystemExit(main(argv))
'''

# What each forcing makes the one line say.
SAID = {"darwin": "your code runs without the sandbox on this system: isolation needs Linux",
        "spawned": f"your code runs without the sandbox: {SPAWN_VARIABLE}=1 spawns",
        "no-cgroups": "sandbox layers missing on this system: memory-cgroup, pids-cgroup"}
# Anything the notice may say starts so.
NOTICES = ("your code runs without the sandbox", "sandbox layers missing")

COMMANDS = {
    "watch": ["watch", "generate"],
    "talk": ["talk", "Tom", "--chars", "10", "--seed", "1"],  # the learner's sampler
    "talk --yours": ["talk", "Tom", "--chars", "10", "--seed", "1", "--yours"],
    "trace": ["trace", "generate", "Tom", "--steps", "3"],
    "train --yours": ["train", "--yours", "--steps", "2", "--threads", "1"],
}


def full_sandbox() -> bool:
    iso = probe()
    return bool(iso.launcher and iso.landlock_abi and iso.seccomp and not iso.missing())


@pytest.fixture(scope="module")
def kata(tmp_path_factory) -> Path:
    """The references of what the commands run, recorded as passed, as a grade records
    them: the commands then run the learner's files at once."""
    folder = tmp_path_factory.mktemp("notice") / "kata"
    for name in ("06-generate", "16-sampler", "19-batches", "23-gpt", "25-train-step"):
        (folder / "problems" / name).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / name / "solution.py",
                    folder / "problems" / name / "solution.py")
    record_passing_references(folder)
    (folder / "driver.py").write_text(DRIVER, encoding="utf-8")
    return folder


def run(kata: Path, force: str, command: str, out: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != SPAWN_VARIABLE}
    if force == "spawned":
        env[SPAWN_VARIABLE] = "1"
    argv = COMMANDS[command] + (["--out", str(out)] if command.startswith("train") else [])
    return subprocess.run([sys.executable, str(kata / "driver.py"), force, *argv],
                          capture_output=True, text=True, timeout=900, cwd=kata, env=env,
                          stdin=subprocess.DEVNULL)


def notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if any(n in line for n in NOTICES)]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("force", list(SAID))
def test_a_command_says_once_how_your_code_runs_short_of_the_sandbox(kata, tmp_path, force,
                                                                     command):
    done = run(kata, force, command, tmp_path / "run")
    if command == "trace" and force != "no-cgroups":
        # Spawned workers have no witness to serve the model calls a trace shows: it
        # says so, once the learner's code has loaded.
        # Where the spawned path is forced on Linux, unsetting the variable is the way.
        said = "forces: unset it" if force == "spawned" else "Linux only"
        assert done.returncode == 1 and said in done.stdout, done.stdout
    else:
        assert done.returncode == 0, done.stderr
    said = notices(done.stderr)
    assert len(said) == 1, done.stderr
    assert said[0] == f"({said[0][1:-1]})" and SAID[force] in said[0], said
    assert not any(n in done.stdout for n in NOTICES), done.stdout  # stderr only


@pytest.mark.parametrize("command", list(COMMANDS))
def test_under_the_full_sandbox_a_command_says_nothing_of_it(kata, tmp_path, command):
    if not full_sandbox():
        pytest.skip("this machine does not give every layer")
    done = run(kata, "full", command, tmp_path / "run")
    assert done.returncode == 0, done.stderr
    assert notices(done.stderr) == [], done.stderr


# The layers a worker under the full sandbox reports (grader/sandbox/worker/isolation.py).
FULL = ["user-namespace", "network-namespace", "pid-namespace", "memory-cgroup-v2",
        "pids-cgroup-v2", "cpu-cgroup-v2", "new-session", "scratch-tmpfs", "unprivileged-uid",
        "clean-env", "rlimits", "no-new-privs", "landlock-abi4", "seccomp-no-sockets"]


def test_missing_layers_are_named_from_what_the_worker_reported(monkeypatch):
    assert missing_layers(FULL) == []
    assert missing_layers([]) == []  # no worker has said yet
    monkeypatch.setattr(shutil, "which", lambda name: f"/usr/bin/{name}")
    no_namespaces = [layer for layer in FULL if "namespace" not in layer and
                     layer != "scratch-tmpfs"]
    # Named from the layers that ran: the worker's "missing:" entry, the last of its
    # list (the first cut), is not read back, nor counted twice.
    assert missing_layers(no_namespaces) == ["user namespaces (refused)", "scratch-tmpfs"]
    assert missing_layers(no_namespaces + ["missing:scratch-tmpfs"]) == [
        "user namespaces (refused)", "scratch-tmpfs"]
    v1 = [layer.replace("cpu-cgroup-v2", "cpuacct-cgroup-v1") for layer in FULL]
    assert missing_layers(v1) == []
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert missing_layers(no_namespaces)[0] == "user namespaces (no unshare command)"
    older = [layer for layer in FULL if not layer.startswith(("landlock", "seccomp"))]
    assert missing_layers(older) == ["Landlock", "seccomp"]


def test_a_pool_without_its_fork_server_says_it_runs_unsandboxed(monkeypatch):
    monkeypatch.delenv(SPAWN_VARIABLE, raising=False)
    pool = WorkerPool(sandbox=Limits())
    assert sandbox_notice(pool) is None  # before any worker has said which layers ran
    pool.use_fork = False  # what start() does when the fork server cannot start
    said = sandbox_notice(pool)
    assert said and "without the sandbox" in said and "fork server could not start" in said


def test_talk_says_it_before_the_prompt(kata):
    """On a terminal both streams mix: a line written once the prompt is out would land
    between the prompt and its continuation."""
    env = {**os.environ, SPAWN_VARIABLE: "1"}
    done = subprocess.run([sys.executable, str(kata / "driver.py"), "spawned",
                           *COMMANDS["talk"]], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=900, cwd=kata, env=env)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    said = [i for i, line in enumerate(lines) if SAID["spawned"] in line]
    assert said and lines[said[0]].startswith("("), lines
    assert said[0] < next(i for i, line in enumerate(lines) if line.startswith("Tom")), lines


def test_interactive_watch_shows_the_line_again_under_each_screen_it_draws(monkeypatch):
    """Its screen is cleared before each grade, and the one line on stderr with it."""
    import io
    import types

    from rich.console import Console

    import grader.grading.engine.session as session
    from grader.learner import status, watch
    from grader.registry import find
    from grader.reports.report import ProblemSummary, Report

    problem = find("generate")
    graded = Report([ProblemSummary(problem, problem.starter)], "exact", {})
    monkeypatch.setattr(session, "grade_problems", lambda submissions, pool: graded)
    monkeypatch.setattr(status, "record", lambda report: None)  # no learner's status file
    for notice, shown in ((None, False), (SAID["darwin"], True)):
        pool = types.SimpleNamespace(notice=notice)
        watcher = watch.Watcher(problem, pool=pool, interactive=True, keys=lambda: None)
        watcher.out = Console(file=io.StringIO(), width=200)
        watcher.grade()
        watcher.grade()
        screen = watcher.out.file.getvalue()
        assert screen.count(SAID["darwin"]) == (2 if shown else 0), screen
