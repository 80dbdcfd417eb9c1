"""A grade leaves the temporary folder as it found it: the workers' scratch folders
and the cache folder torch makes on its first optimizer (`torchinductor_<user>`) go
with the grade, on every path a grade takes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from grader.sandbox.host.handles import worker_environment
from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.scratch_folders import TORCH_CACHE_VARIABLE, torch_cache_kept_in
from grader.sandbox.wire.limits import Limits


# train-step: its reference and the worker both build torch's AdamW. Run on Linux, the
# spawned path forced there: not yet run on macOS or Windows, whose system libraries
# may write in TMPDIR themselves.
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="run on Linux only so far")
@pytest.mark.parametrize("path", ["fork", "spawned", "unsandboxed"])
def test_a_grade_that_trains_leaves_the_temporary_folder_empty(path: str,
                                                              tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path), "GPT_KATA_SPAWN_WORKERS": "0"}
    env.pop(TORCH_CACHE_VARIABLE, None)
    if path == "spawned":
        env["GPT_KATA_SPAWN_WORKERS"] = "1"
    options = ["--no-sandbox"] if path == "unsandboxed" else []
    done = subprocess.run([sys.executable, "-m", "grader", "grade", "train-step",
                           "--reference", "-q", *options],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [p.name for p in tmp_path.iterdir()] == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux's")
def test_the_sandboxed_fork_server_keeps_torchs_cache_in_its_scratch_root(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Its environment holds no TMPDIR: without the variable, torch's folder would be
    # made in /tmp, beyond the reach of the test above.
    monkeypatch.delenv(TORCH_CACHE_VARIABLE, raising=False)
    with WorkerPool(sandbox=Limits()) as pool:
        server = pool.server
        if server is None or server.process is None:
            pytest.skip("no fork server here")
        cache = Path(server.scratch_root) / "torch-cache"
        # While the server execs (a launcher execs it once more), its environment reads
        # empty for a moment: read it once it holds anything.
        environ: list[bytes] = []
        for _ in range(300):
            environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
            if any(environ):
                break
            time.sleep(0.1)
        assert f"{TORCH_CACHE_VARIABLE}={cache}".encode() in environ
        assert pool.torch_cache() == str(cache)


def test_without_a_fork_server_the_pool_keeps_torchs_cache_in_a_root_it_removes() -> None:
    pool = WorkerPool(fork=False)
    cache = Path(pool.torch_cache())
    root = cache.parent
    assert root.name.startswith("gpt-kata-grade-") and root.is_dir()
    pool.close()
    assert not root.exists()


def test_torch_is_told_the_folder_while_grading_then_forgets_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TORCH_CACHE_VARIABLE, raising=False)
    with torch_cache_kept_in(str(tmp_path / "torch-cache")):
        assert os.environ[TORCH_CACHE_VARIABLE] == str(tmp_path / "torch-cache")
    assert TORCH_CACHE_VARIABLE not in os.environ


def test_a_folder_chosen_while_grading_is_kept(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TORCH_CACHE_VARIABLE, raising=False)
    with torch_cache_kept_in(str(tmp_path / "torch-cache")):
        os.environ[TORCH_CACHE_VARIABLE] = str(tmp_path / "theirs")
    assert os.environ[TORCH_CACHE_VARIABLE] == str(tmp_path / "theirs")


def test_a_cache_folder_already_chosen_is_kept(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = str(tmp_path / "mine")
    monkeypatch.setenv(TORCH_CACHE_VARIABLE, chosen)
    with torch_cache_kept_in(str(tmp_path / "torch-cache")):
        assert os.environ[TORCH_CACHE_VARIABLE] == chosen
    assert os.environ[TORCH_CACHE_VARIABLE] == chosen


def test_a_worker_without_the_sandbox_writes_its_temporary_files_in_its_scratch(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPT_KATA_EXAMPLES_SEED", "secret")
    env = worker_environment("/grade/worker-1", "/grade/torch-cache")
    assert [env[name] for name in ("TMPDIR", "TEMP", "TMP")] == ["/grade/worker-1"] * 3
    assert env[TORCH_CACHE_VARIABLE] == "/grade/torch-cache"
    assert "GPT_KATA_EXAMPLES_SEED" not in env


def test_a_worker_without_the_sandbox_draws_off_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    # macOS's backend (Windows's is TkAgg): a submission's plt.show() opened a window
    # and waited for it to close, where the sandbox, with no display, returns at once.
    monkeypatch.setenv("MPLBACKEND", "macosx")
    assert worker_environment("/grade/worker-1", "/grade/torch-cache")["MPLBACKEND"] == "Agg"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals as on Linux")
@pytest.mark.parametrize("path", ["fork", "spawned"])
@pytest.mark.parametrize("ended_by", ["SIGTERM", "SIGHUP"])
def test_a_grade_ended_from_outside_leaves_the_temporary_folder_empty(path: str, ended_by: str,
                                                                      tmp_path: Path) -> None:
    """SIGTERM (a CI job's time limit) and SIGHUP (its terminal closed) stop a grade as
    Ctrl-C does: the workers and their scratch folders go with it, where Python's
    default left the spawned path's."""
    import signal
    import time

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch),
           "GPT_KATA_SPAWN_WORKERS": "1" if path == "spawned" else "0"}
    grade = subprocess.Popen([sys.executable, "-m", "grader", "grade", "crop-context",
                              "--submission", str(ROOT / "tests" / "hostile" / "hang.py"),
                              "--timeout", "120"], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Its scratch folder is made as its workers start; the hang runs soon after.
        for _ in range(600):
            if any(scratch.iterdir()) or grade.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(3.0)
        assert grade.poll() is None, "the grade ended before it was stopped"
        grade.send_signal(getattr(signal, ended_by))
        # Not a time limit: a bound on a grade that ignored the signal (which would end
        # with 1 at its own --timeout). A loaded machine once took over 60 s to stop.
        assert grade.wait(timeout=240) == 130
    finally:
        grade.kill()
    assert [p.name for p in scratch.iterdir()] == []


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no SIGHUP")
def test_a_sighup_that_nohup_ignores_stays_ignored() -> None:
    """`nohup gpt-kata gradebook ...` keeps grading when its terminal closes, and
    `gpt-kata gradebook ... &` when Ctrl-C is pressed in it."""
    import signal

    from grader.learner.output import handle_stop_signals

    saved = {number: signal.getsignal(number)
             for number in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT)}
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a shell's background job
        handle_stop_signals()
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        handle_stop_signals()
        assert signal.getsignal(signal.SIGHUP) is signal.getsignal(signal.SIGTERM)
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
