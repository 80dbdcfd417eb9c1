"""One spawned process serves every problem of a grade (SpawnHost), yet no
submission changes what the next one sees, and a crash fails only its own problem.

Forced on Linux with WorkerPool(fork=False), the path macOS and Windows take.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from grader.sandbox.host.pool import WorkerPool
from grader.sandbox.host.process import SubmissionProcess

# Changes every piece of global state the host puts back, at import and in a call.
MESSY = '''
import os, random, signal, sys, warnings
import torch
import torch.nn.functional as F

sys.path.insert(0, "/nowhere")
sys.modules["leftover_helper"] = type(sys)("leftover_helper")
sys.modules["leftover_helper"].__file__ = "/nowhere/leftover_helper.py"
torch.set_default_dtype(torch.float64)
torch.manual_seed(1234)
random.seed(1234)
os.environ["GPT_KATA_LEFTOVER"] = "1"
warnings.simplefilter("error")
torch.softmax = lambda *a, **k: "patched"
F.relu = lambda *a, **k: "patched"
torch.Tensor.leftover = 1
os.makedirs("leftover-folder", exist_ok=True)
open("leftover.txt", "w").write("x")
# A hook on every module's forward, and an alarm that would end a later problem's run.
from torch.nn.modules.module import register_module_forward_hook
register_module_forward_hook(lambda module, inputs, output: output * 0)
if hasattr(signal, "setitimer"):
    signal.signal(signal.SIGALRM, lambda *args: None)
    signal.setitimer(signal.ITIMER_REAL, 600)


class Solution:
    def state(self):
        torch.set_grad_enabled(False)
        torch.set_num_threads(3)
        torch.use_deterministic_algorithms(True)
        os.chdir("leftover-folder")
        # Last: the grader's own imports before the next load must not need it.
        sys.path[:] = ["/nonexistent"]
        return os.getpid()

    def crash(self):
        os._exit(3)
'''

# Reports what it finds.
PROBE = '''
import os, random, signal, sys, warnings
import torch
import torch.nn.functional as F


class Solution:
    def state(self):
        return {
            "pid": os.getpid(),
            "dtype": str(torch.get_default_dtype()),
            "grad": torch.is_grad_enabled(),
            "threads": torch.get_num_threads(),
            "deterministic": torch.are_deterministic_algorithms_enabled(),
            "torch_draw": torch.rand(3).tolist(),
            "python_draw": random.random(),
            "path": "/nowhere" in sys.path,
            "helper": "leftover_helper" in sys.modules,
            "environ": "GPT_KATA_LEFTOVER" in os.environ,
            "warnings_error": any(f[0] == "error" for f in warnings.filters),
            "softmax": torch.softmax(torch.zeros(2), 0).tolist(),
            "relu": F.relu(torch.ones(1)).tolist(),
            "tensor_attribute": hasattr(torch.Tensor, "leftover"),
            "files": sorted(os.listdir(".")),
            "module_output": float(torch.nn.Identity()(torch.ones(1)).item()),
            "alarm": signal.getitimer(signal.ITIMER_REAL)[0] if hasattr(signal, "getitimer")
            else 0.0,
            # Modes every torch call goes through: putting the default device back
            # must not leave one (set_default_device("cpu") does).
            "modes": [type(mode).__name__
                      for mode in torch.overrides._get_current_function_mode_stack()],
        }
'''


def process(tmp_path: Path, name: str, text: str, pool: WorkerPool,
            methods: list[str]) -> SubmissionProcess:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "solution.py").write_text(text)
    return SubmissionProcess(str(folder / "solution.py"), "Solution", methods, pool)


def hosted_pool() -> WorkerPool:
    pool = WorkerPool(fork=False)
    pool.prepare([])  # what a grade does: one host for every problem
    return pool


def test_a_submission_sees_none_of_what_the_previous_one_changed(tmp_path: Path) -> None:
    with hosted_pool() as pool:
        alone = process(tmp_path, "alone", PROBE, pool, ["state"]).call("state", ())
        assert alone.error is None, alone.error
        messy = process(tmp_path, "messy", MESSY, pool, ["state"])
        messed = messy.call("state", ())
        assert messed.error is None, messed.error
        after = process(tmp_path, "after", PROBE, pool, ["state"]).call("state", ())
        assert after.error is None, after.error
    fresh, seen = alone.result, after.result
    # Served by the same process: a torch import per grade, not per problem.
    assert messed.result == fresh["pid"] == seen["pid"]
    assert seen == fresh


# Starts a thread that goes on changing the default dtype once its problem is done.
THREADED = '''
import os, threading, time
import torch


def keep_changing():
    while True:
        torch.set_default_dtype(torch.float64)
        time.sleep(0.01)


threading.Thread(target=keep_changing, daemon=True).start()


class Solution:
    def state(self):
        return {"pid": os.getpid()}
'''


def test_a_thread_left_running_gets_the_next_problem_a_new_host(tmp_path: Path) -> None:
    """Put back before the next load, the state was changed again by the thread: a
    later problem's reference solution failed with float64 weights."""
    with hosted_pool() as pool:
        threaded = process(tmp_path, "threaded", THREADED, pool, ["state"]).call("state", ())
        after = process(tmp_path, "after", PROBE, pool, ["state"]).call("state", ())
    assert threaded.error is None and after.error is None, (threaded.error, after.error)
    assert after.result["pid"] != threaded.result["pid"]
    assert after.result["dtype"] == "torch.float32"


def test_the_learners_folders_are_not_the_graders() -> None:
    """Only the grader package's modules stay loaded from one problem to the next, not
    the checkout's around it, which holds the learner's problems/ and their helpers."""
    from grader import paths
    from grader.sandbox.worker.baseline import _trusted_roots

    roots = _trusted_roots()
    assert os.path.normcase(os.path.realpath(paths.PACKAGE)) + os.sep in roots
    assert os.path.normcase(os.path.realpath(paths.PACKAGE.parent)) + os.sep not in roots


def test_an_evicted_submission_is_loaded_again_on_its_next_call(tmp_path: Path) -> None:
    with hosted_pool() as pool:
        first = process(tmp_path, "first", PROBE, pool, ["state"])
        second = process(tmp_path, "second", MESSY, pool, ["state"])
        before = first.call("state", ())
        assert second.call("state", ()).error is None
        again = first.call("state", ())
    assert before.error is None and again.error is None
    assert again.result == before.result


def test_a_crash_fails_only_its_own_problem(tmp_path: Path) -> None:
    with hosted_pool() as pool:
        crashing = process(tmp_path, "crashing", MESSY, pool, ["state", "crash"])
        pid = crashing.call("state", ()).result
        crashed = crashing.call("crash", ())
        after = process(tmp_path, "after", PROBE, pool, ["state"]).call("state", ())
    assert crashed.error is not None and crashed.error["type"] == "WorkerDied"
    assert after.error is None, after.error
    assert after.result["pid"] != pid  # the crashed host was replaced
    assert after.result["dtype"] == "torch.float32"


def test_a_load_error_keeps_the_host(tmp_path: Path) -> None:
    with hosted_pool() as pool:
        broken = process(tmp_path, "broken", "import torch\nraise ValueError('no')\n", pool,
                         ["state"])
        assert broken.load() is not None
        first = process(tmp_path, "first", PROBE, pool, ["state"]).call("state", ())
        second = process(tmp_path, "second", PROBE, pool, ["state"]).call("state", ())
    assert first.error is None and second.error is None
    assert first.result == second.result


def test_a_time_out_fails_only_its_own_problem(tmp_path: Path) -> None:
    looping = "class Solution:\n    def state(self):\n        while True:\n            pass\n"
    with hosted_pool() as pool:
        stuck = process(tmp_path, "stuck", looping, pool, ["state"])
        # The loop never ends, whatever the limit: no race with the machine's speed.
        timed_out = stuck.call("state", (), timeout=1.0)
        after = process(tmp_path, "after", PROBE, pool, ["state"]).call("state", ())
    assert timed_out.error is not None and stuck.timed_out
    assert after.error is None, after.error


def test_the_baseline_holds_on_a_torch_without_get_default_device(monkeypatch) -> None:
    """Intel Macs stop at torch 2.2, which has no torch.get_default_device: the host
    took every problem down there before its first hello."""
    import torch

    from grader.sandbox.worker.baseline import capture, restore

    monkeypatch.delattr(torch, "get_default_device")
    baseline = capture()
    assert baseline.device is None
    restore(baseline)
    assert torch.empty(1).device.type == "cpu"


def test_a_spawned_worker_ends_once_the_grader_that_started_it_is_gone(monkeypatch) -> None:
    """It leads a session of its own: a grader killed or hung up on (its terminal
    closed) left it running the learner's endless loop, a core spun for good. An
    orphan gets a new parent, which it notices."""
    from grader.sandbox.worker import serve

    parents = iter([100, 100, 1])  # the grader's pid twice, then init's
    naps: list[float] = []

    class Ended(Exception):
        pass

    def end(code: int) -> None:
        raise Ended(code)

    monkeypatch.setattr(serve.os, "getppid", lambda: next(parents))
    monkeypatch.setattr(serve.time, "sleep", naps.append)
    monkeypatch.setattr(serve.os, "_exit", end)
    try:
        serve.end_when_orphaned(100, poll=0.5)
    except Ended:
        pass
    else:
        raise AssertionError("it went on after its parent was gone")
    assert naps == [0.5, 0.5]


# Starts a process in a session of its own that holds every descriptor the worker has,
# its pipes to the grader among them, and outlives it: where no sandbox ends it, the
# grader must not wait for it.
DAEMON = '''
import os, sys, time


class Solution:
    def state(self):
        if os.fork() == 0:
            os.setsid()
            daemon = os.fork()
            if daemon == 0:
                time.sleep(300)
            with open(PID_FILE, "w") as out:
                out.write(str(daemon))
            os._exit(0)
        os.wait()
        return os.getpid()
'''


def test_a_daemon_holding_the_workers_pipe_does_not_hold_the_grade(tmp_path: Path) -> None:
    pid_file = tmp_path / "daemon.pid"
    finished = threading.Event()

    def grade() -> None:
        with hosted_pool() as pool:
            text = f"PID_FILE = {str(pid_file)!r}\n{DAEMON}"
            assert isinstance(process(tmp_path, "daemon", text, pool, ["state"])
                              .call("state", ()).result, int)
        finished.set()

    try:
        threading.Thread(target=grade, daemon=True).start()
        # The pool's end closes the worker's channel: before, that waited for the
        # daemon's end (five minutes here) with the grade's report unwritten.
        assert finished.wait(120), "the grade waited for a daemon its submission started"
    finally:
        if pid_file.is_file():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
