"""The isolation layers, each checked from inside a sandboxed process.

Every check runs a small interpreter that calls isolate() and then tries
something a submission must not (or must) be able to do, reporting what
happened as JSON. A check whose layer this machine lacks is skipped, saying so.
"""

from __future__ import annotations

import errno
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from grader.sandbox.worker.describe import limit_message, out_of_memory
from grader.sandbox.worker.layers import readable
from grader.sandbox.worker.layers.policy import MB, Policy, clean_environment
from grader.sandbox.worker.machine import Isolation, launcher_prefix, probe

ISO = probe()
LINUX = sys.platform.startswith("linux")
ROOT = Path(__file__).resolve().parent.parent

needs_landlock = pytest.mark.skipif(ISO.landlock_abi < 1, reason="no Landlock on this kernel")
needs_rlimits = pytest.mark.skipif(not ISO.rlimits, reason="no resource limits on this platform")
needs_memory_limit = pytest.mark.skipif(
    not (ISO.rlimits and LINUX), reason="memory rlimits are placed and enforced on Linux only")
needs_namespaces = pytest.mark.skipif(
    not ISO.namespaces, reason="unshare cannot create user, network and PID namespaces here")

# Runs in the sandboxed interpreter: isolate, then the test's body, then report.
CHILD = """
import json, os, sys
from grader.sandbox.worker.isolation import isolate
from grader.sandbox.worker.machine import Isolation
from grader.sandbox.worker.describe import limit_message, out_of_memory
from grader.sandbox.worker.layers.policy import Policy
args = json.loads(sys.argv[1])
policy = Policy(**args["policy"])
machine = Isolation(**args["isolation"]) if args["isolation"] else None
result = {"layers": isolate(policy, machine)}
def attempt(name, action):
    try:
        value = action()
        result[name] = "ok" if value is None else value
    except BaseException as exc:
        result[name] = {"error": type(exc).__name__, "errno": getattr(exc, "errno", None),
                        "oom": out_of_memory(exc), "message": limit_message(policy, exc)}
exec(args["body"])
print(json.dumps(result), flush=True)
"""


def run_isolated(body: str, tmp_path: Path, *, launcher: bool = False,
                 argv_prefix: list[str] | None = None, machine: dict[str, Any] | None = None,
                 **policy: Any) -> dict[str, Any]:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    policy.setdefault("readable", readable.readable_paths_for_python())
    policy.setdefault("scratch", str(scratch))
    args = json.dumps({"policy": policy, "body": textwrap.dedent(body), "isolation": machine})
    prefix = (argv_prefix or []) + (launcher_prefix(ISO) if launcher else [])
    done = subprocess.run([*prefix, sys.executable, "-c", CHILD, args], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def refused(outcome: Any) -> bool:
    return isinstance(outcome, dict) and outcome["error"] in ("PermissionError", "OSError")


@pytest.fixture
def private(tmp_path: Path) -> Path:
    """A folder standing in for the grader's solutions/: never readable."""
    folder = tmp_path / "solutions"
    folder.mkdir()
    (folder / "reference.py").write_text("SECRET = 42\n")
    return folder


@pytest.fixture
def submission(tmp_path: Path) -> Path:
    folder = tmp_path / "problem"
    folder.mkdir()
    (folder / "solution.py").write_text("class Solution: pass\n")
    return folder / "solution.py"


def test_probe_is_cached_and_describes_itself() -> None:
    assert probe() is ISO
    prefix = launcher_prefix(ISO)
    assert prefix == [] or "--net" in prefix and "--pid" in prefix


def test_a_report_names_each_layer_as_present_or_missing() -> None:
    bare = Isolation(platform="linux")
    full = Isolation(
        platform="linux", landlock_abi=4, launcher=("unshare", "--mount-proc"), rlimits=True,
        prctl=True, seccomp=True,
        cgroups=("memory-cgroup-v2", "pids-cgroup-v2", "cpu-cgroup-v2"),
        unprivileged_uid=True)
    assert bare.summary() == [] and full.missing() == []
    layers = full.summary()
    assert len(set(layers)) == len(layers) >= 10
    # what a bare machine reports missing is what a full one reports present, by one name
    assert bare.missing() and all(any(layer.startswith(gap) for layer in layers)
                                  for gap in bare.missing())


def test_clean_environment_leaks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_SECRET", "x")
    env = clean_environment(tmp_path)
    assert "GRADER_SECRET" not in env
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path)
    for name in ("PYTHONNOUSERSITE", "PYTHONDONTWRITEBYTECODE", "OMP_NUM_THREADS"):
        assert env[name] == "1"


@needs_rlimits
def test_isolate_replaces_the_environment(tmp_path: Path) -> None:
    env = clean_environment(tmp_path)
    result = run_isolated("result['env'] = dict(os.environ)", tmp_path, environment=env,
                          readable=[], memory_bytes=None)
    assert result["env"] == env
    assert "clean-env" in result["layers"]


def test_readable_paths_never_cover_a_denied_folder(tmp_path: Path) -> None:
    paths = readable.readable_paths_for_python()
    for private in readable.grader_private_paths():
        for path in paths:
            # a rule is made on where a path points
            assert not readable.inside(Path(private), Path(os.path.realpath(path))), \
                (path, private)
    # A folder that holds a denied one is granted entry by entry around it.
    (tmp_path / "keep").mkdir()
    (tmp_path / "deep" / "denied").mkdir(parents=True)
    (tmp_path / "deep" / "other").mkdir()
    kept = readable._without(tmp_path, [tmp_path / "deep" / "denied"])
    assert sorted(kept) == [tmp_path / "deep" / "other", tmp_path / "keep"]


def venv_with_a_lib64_link(root: Path) -> tuple[Path, Path]:
    """A venv as `python3 -m venv` makes it on 64-bit Linux, the grader installed in
    it: (the venv, the grader's package, which is private)."""
    package = root / "venv" / "lib" / "python3" / "site-packages" / "grader"
    (package / "_kata" / "solutions").mkdir(parents=True)
    (package / "_kata" / "solutions" / "reference.py").write_text("SECRET = 1\n")
    (package.parent / "torch").mkdir()
    (root / "venv" / "bin").mkdir()
    (root / "venv" / "lib64").symlink_to("lib")
    return root / "venv", package


def test_a_link_to_a_folder_that_holds_a_denied_one_is_not_granted(tmp_path: Path) -> None:
    """A rule on `lib64 -> lib` would be a rule on lib, grader and all: a submission
    read the installed grader's references through it, and passed by running them."""
    venv, package = venv_with_a_lib64_link(tmp_path)
    kept = readable._without(venv, [package])
    assert venv / "lib64" not in kept
    for path in kept:
        assert not readable.inside(package, Path(os.path.realpath(path))), path
    assert package.parent / "torch" in kept and venv / "bin" in kept
    # a link to a denied folder itself, or into one, is left out
    (venv / "to-grader").symlink_to(package)
    (venv / "to-solutions").symlink_to(package / "_kata" / "solutions")
    kept = readable._without(venv, [package])
    assert not any("grader" in os.path.realpath(p).split(os.sep) for p in kept)


@needs_landlock
def test_the_installed_graders_references_stay_unreadable_through_a_venv_link(
        tmp_path: Path) -> None:
    venv, package = venv_with_a_lib64_link(tmp_path)
    granted = [str(p) for p in readable._without(venv, [package])]
    linked = venv / "lib64" / "python3" / "site-packages" / "grader" / "_kata" / "solutions"
    direct = package / "_kata" / "solutions"
    body = f"""
    attempt("through the link", lambda: open({str(linked / "reference.py")!r}).read())
    attempt("directly", lambda: open({str(direct / "reference.py")!r}).read())
    attempt("beside it", lambda: os.listdir({str(package.parent / "torch")!r}))
    """
    result = run_isolated(body, tmp_path, readable=[*granted,
                                                    *readable.readable_paths_for_python()])
    assert refused(result["through the link"]) and refused(result["directly"])
    assert result["beside it"] == []


def test_a_submission_beside_private_folders_is_granted_alone() -> None:
    # A file at the checkout's top level: its folder holds solutions/, data/, .git.
    policy = Policy.for_submission(ROOT / "solution.py", ROOT / "scratch")
    assert str(ROOT / "solution.py") in policy.readable
    assert str(ROOT) not in policy.readable


@needs_landlock
def test_reads_only_python_and_the_submission(tmp_path: Path, private: Path,
                                              submission: Path) -> None:
    policy = Policy.for_submission(submission, tmp_path / "scratch", memory_bytes=None)
    assert not any(readable.inside(private, Path(p)) for p in policy.readable)
    body = f"""
    attempt("private", lambda: open({str(private / "reference.py")!r}).read())
    attempt("listing", lambda: os.listdir({str(private)!r}))
    attempt("submission", lambda: len(open({str(submission)!r}).read()))
    attempt("grader", lambda: open({str(ROOT / "pyproject.toml")!r}).read())
    attempt("stdlib", lambda: __import__("decimal") and None)
    """
    result = run_isolated(body, tmp_path, readable=policy.readable)
    assert refused(result["private"]) and refused(result["listing"])
    assert refused(result["grader"])
    assert result["submission"] > 0
    assert result["stdlib"] == "ok"
    assert f"landlock-abi{ISO.landlock_abi}" in result["layers"]


@needs_landlock
def test_writes_only_to_scratch(tmp_path: Path, submission: Path) -> None:
    body = f"""
    attempt("scratch", lambda: open({str(tmp_path / "scratch" / "f")!r}, "w").write("x"))
    attempt("beside", lambda: open({str(submission.parent / "new.py")!r}, "w").write("x"))
    attempt("overwrite", lambda: open({str(submission)!r}, "a").write("x"))
    attempt("tmp", lambda: open("/tmp/escaped-{os.getpid()}", "w").write("x"))
    attempt("devnull", lambda: open(os.devnull, "w").write("x"))
    attempt("relative", lambda: open("relative.txt", "w").write("x"))
    """
    result = run_isolated(body, tmp_path, readable=[str(submission.parent),
                                                    *readable.readable_paths_for_python()])
    assert result["scratch"] == result["devnull"] == result["relative"] == 1
    assert (tmp_path / "scratch" / "relative.txt").exists()
    assert refused(result["beside"]) and refused(result["overwrite"]) and refused(result["tmp"])
    assert not (submission.parent / "new.py").exists()
    assert submission.read_text() == "class Solution: pass\n"


@pytest.mark.parametrize("abi", range(1, 8))
def test_older_landlock_abis(tmp_path: Path, private: Path, abi: int) -> None:
    """Each ABI's ruleset, as an older kernel would get it (newer kernels accept them)."""
    if ISO.landlock_abi < abi:
        pytest.skip(f"this kernel's Landlock is older than ABI {abi}")
    scratch = tmp_path / "scratch"
    body = f"""
    attempt("private", lambda: open({str(private / "reference.py")!r}).read())
    attempt("write", lambda: open({str(scratch / "a")!r}, "w").write("x"))
    attempt("rename", lambda: os.rename({str(scratch / "a")!r}, {str(scratch / "b")!r}))
    attempt("truncate", lambda: os.truncate({str(scratch / "b")!r}, 0))
    """
    result = run_isolated(body, tmp_path, memory_bytes=None,
                          machine={"platform": sys.platform, "landlock_abi": abi})
    assert refused(result["private"])
    assert (result["write"], result["rename"], result["truncate"]) == (1, "ok", "ok")
    assert f"landlock-abi{abi}" in result["layers"]
    assert "seccomp-no-sockets" not in result["layers"]


@needs_landlock
def test_cannot_start_programs(tmp_path: Path) -> None:
    body = """
    import subprocess
    attempt("run", lambda: subprocess.run(["/bin/sh", "-c", "true"]).returncode)
    attempt("system", lambda: os.system("true"))
    """
    result = run_isolated(body, tmp_path)
    assert refused(result["run"])
    assert result["system"] != 0  # the shell itself could not be started


@pytest.fixture
def listener() -> Any:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    yield server.getsockname()[1]
    server.close()


CONNECT = """
import socket
def connect():
    with socket.create_connection(("127.0.0.1", {port}), timeout=5):
        pass
attempt("connect", connect)
"""


@pytest.mark.skipif(not ISO.seccomp, reason="no seccomp filter for this machine")
def test_no_new_sockets_under_seccomp(tmp_path: Path, listener: int) -> None:
    result = run_isolated(CONNECT.format(port=listener), tmp_path, memory_bytes=None)
    assert refused(result["connect"]) and result["connect"]["errno"] == 1  # EPERM
    assert "seccomp-no-sockets" in result["layers"]


@pytest.mark.skipif(ISO.landlock_abi < 4, reason="Landlock before ABI 4 has no TCP rules")
def test_no_tcp_under_landlock(tmp_path: Path, listener: int) -> None:
    result = run_isolated(CONNECT.format(port=listener), tmp_path, forbid_sockets=False)
    assert refused(result["connect"]), result


@needs_namespaces
def test_no_network_in_the_namespace(tmp_path: Path, listener: int) -> None:
    # Nothing but the namespace: the grader's loopback is another machine's.
    body = CONNECT.format(port=listener) + "result['interfaces'] = socket.if_nameindex()"
    result = run_isolated(body, tmp_path, launcher=True, forbid_sockets=False, readable=[],
                          memory_bytes=None)
    assert isinstance(result["connect"], dict), result
    assert [name for _index, name in result["interfaces"]] == ["lo"]
    assert {"user-namespace", "network-namespace", "pid-namespace"} <= set(result["layers"])


@pytest.mark.skipif(ISO.landlock_abi < 6, reason="Landlock before ABI 6 does not scope signals")
def test_cannot_signal_outside_the_sandbox(tmp_path: Path) -> None:
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        body = f"""
        import signal
        attempt("victim", lambda: os.kill({victim.pid}, signal.SIGTERM))
        attempt("parent", lambda: os.kill(os.getppid(), 0))
        attempt("itself", lambda: os.kill(os.getpid(), 0))
        """
        result = run_isolated(body, tmp_path)
        assert refused(result["victim"]) and refused(result["parent"])
        assert result["itself"] == "ok"
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


@needs_memory_limit
def test_memory_limit_stops_twice_the_budget(tmp_path: Path) -> None:
    body = f"""
    attempt("bytes", lambda: len(bytearray({128 * MB})))
    attempt("list", lambda: len([0.5] * {128 * MB // 8}))
    attempt("small", lambda: len(bytearray({8 * MB})))
    """
    result = run_isolated(body, tmp_path, memory_bytes=64 * MB)
    for name in ("bytes", "list"):
        assert result[name]["error"] == "MemoryError" and result[name]["oom"]
        assert result[name]["message"] == "the memory limit (64 MB) was reached"
    assert result["small"] == 8 * MB  # the process lives on and can still work
    assert "memory-limit" in result["layers"]


@needs_rlimits
def test_file_size_limit(tmp_path: Path) -> None:
    body = f"""
    path = os.path.join({str(tmp_path / "scratch")!r}, "big")
    def write():
        with open(path, "wb") as out:
            out.write(bytes({2 * MB}))
    attempt("big", write)
    result["size"] = os.path.getsize(path)
    """
    result = run_isolated(body, tmp_path, max_file_bytes=1 * MB)
    assert result["big"]["errno"] == 27  # EFBIG: Python ignores SIGXFSZ
    assert result["big"]["message"] == "the file size limit (1 MB) was reached"
    assert result["size"] <= 1 * MB


FORK_MANY = """
import time
children = []
def fork_many():
    for _ in range(30):
        pid = os.fork()
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        children.append(pid)
attempt("fork", fork_many)
result["started"] = len(children)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
"""


@needs_rlimits
@pytest.mark.skipif(LINUX and not ISO.unprivileged_uid,
                    reason="the kernel never applies RLIMIT_NPROC to a process of real uid 0, "
                           "and this grader, run as root, cannot take another real uid")
def test_process_limit(tmp_path: Path) -> None:
    """As root too: the launcher (or isolate, without one) takes an unprivileged real uid."""
    body = FORK_MANY
    result = run_isolated(body, tmp_path, max_processes=4, launcher=ISO.namespaces)
    assert result["fork"]["error"] == "BlockingIOError"
    assert result["started"] <= 5


@needs_rlimits
@pytest.mark.skipif(not LINUX or os.geteuid() != 0, reason="needs root outside any launcher")
def test_root_without_a_launcher_takes_an_unprivileged_real_uid(tmp_path: Path) -> None:
    """RLIMIT_NPROC holds (it never would for real uid 0), and there is no way back."""
    body = FORK_MANY + """
attempt("back_to_root", lambda: os.setresuid(0, 0, 0))
"""
    result = run_isolated(body, tmp_path, max_processes=4)
    assert "unprivileged-uid" in result["layers"]
    assert result["fork"]["error"] == "BlockingIOError" and result["started"] <= 4
    assert isinstance(result["back_to_root"], dict)  # refused: no ids mapped, or seccomp


@needs_namespaces
@pytest.mark.parametrize("ending", ["returns", "launcher-killed"])
def test_detached_processes_die_with_the_namespace(tmp_path: Path, ending: str) -> None:
    """A grandchild in a new session, holding a pipe, must die with the sandbox.

    The pipe's read end sees end-of-file once every process holding the write
    end is gone: that is how the test sees processes it cannot name.
    """
    read_end, write_end = os.pipe()
    # As the fork server does: an unprivileged real uid (a grader run as root) clears
    # the death signal unshare arms for the command, which then arms its own.
    script = """
import os, sys, time
from grader.sandbox.worker.layers.namespaces import die_with_launcher
die_with_launcher()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(120)  # the orphan that must not survive
    os._exit(0)
print("started", flush=True)
time.sleep(0 if sys.argv[1] == "returns" else 120)
"""
    launcher = subprocess.Popen(
        [*launcher_prefix(ISO), sys.executable, "-c", script, ending],
        stdout=subprocess.PIPE, text=True, pass_fds=[write_end])
    os.close(write_end)
    try:
        assert launcher.stdout is not None
        assert launcher.stdout.readline().strip() == "started"
        if ending == "launcher-killed":
            launcher.kill()
        ready, _, _ = select.select([read_end], [], [], 60)
        assert ready and os.read(read_end, 1) == b"", "a detached process outlived its sandbox"
    finally:
        os.close(read_end)
        launcher.kill()
        launcher.wait()


# Both children below are forked from one interpreter, as the fork server forks every
# worker: torch is imported once for the two (a second interpreter cost 1.7 CPU-s).
# The first is forked before the fork server's preload, the second after it.
FORKED_AFTER_IMPORT = """
import json, os, sys
import torch
from grader.sandbox.worker.isolation import isolate
from grader.sandbox.worker.describe import out_of_memory
from grader.sandbox.worker.layers.policy import Policy
scratch = sys.argv[1]
os.makedirs(scratch, exist_ok=True)
results = {}


def forked(name, child):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.write(write, json.dumps(child()).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    results[name] = json.loads(os.read(read, 65536).decode() or "null")


def torch_used():
    result = {"layers": isolate(Policy.for_submission(scratch, scratch, memory_bytes=128 << 20))}
    result["shape"] = list(torch.nn.Linear(4, 4)(torch.zeros(1, 4)).shape)
    import torch.nn.functional as F  # a lazy import after isolation
    result["softmax"] = F.softmax(torch.zeros(3), dim=0).sum().item()
    try:
        torch.zeros(64 << 20)  # 256 MB of float32
    except Exception as exc:
        result["oom"] = out_of_memory(exc)
    return result


forked("torch", torch_used)

import types
import torch.nn.functional as F
from grader.sandbox.worker import harnesses
from grader.sandbox.host.forkserver import preload, preload_models
from grader.sandbox.wire.limits import DEFAULT_MEMORY_MB
preload()  # what the fork server has loaded before it forks a worker


class Solution:
    def train_step(self, model, optimizer, x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        loss.backward()
        optimizer.step()
        return loss.item()


def optimizer_stepped():
    preload_models()  # a worker of a problem that takes a model, as train-step does
    isolate(Policy.for_submission(scratch, scratch, memory_bytes=DEFAULT_MEMORY_MB << 20))
    config = dict(vocab_size=5, context_length=4, n_layer=1, n_head=1, n_embd=4)
    x = torch.zeros(2, 1, 4, dtype=torch.long)
    losses, _ = harnesses.train_steps(types.SimpleNamespace(Solution=Solution),
                                      dict(config=config, seed=0), dict(lr=0.1), x, x)
    return losses


forked("optimizer", optimizer_stepped)
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def forked_after_import(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What each child of FORKED_AFTER_IMPORT reported (None for one that reported
    nothing), and the interpreter's stderr."""
    folder = tmp_path_factory.mktemp("forked")
    done = subprocess.run([sys.executable, "-c", FORKED_AFTER_IMPORT, str(folder / "scratch")],
                          capture_output=True, text=True, timeout=300, cwd=folder)
    assert done.returncode == 0, done.stderr
    return {**json.loads(done.stdout), "stderr": done.stderr}


@needs_landlock
def test_torch_runs_in_a_child_forked_after_import(forked_after_import: dict[str, Any]) -> None:
    """The fork server's way: torch imported first, the child isolated, then used."""
    result = forked_after_import["torch"]
    assert result is not None, forked_after_import["stderr"]
    assert result["shape"] == [1, 4]
    assert result["softmax"] == pytest.approx(1.0)
    assert result["oom"] is True
    assert f"landlock-abi{ISO.landlock_abi}" in result["layers"]


@needs_landlock
def test_an_optimizer_steps_in_a_child_forked_after_import(
        forked_after_import: dict[str, Any]) -> None:
    """The training problem's harness in an isolated worker: an optimizer's first
    step imports torch._dynamo, which the fork server does not preload."""
    assert forked_after_import["optimizer"] is not None, forked_after_import["stderr"]
    first, second = forked_after_import["optimizer"]
    assert second < first  # the step learned: the same batch now costs less


def _open_to_nobody() -> str | None:
    """A folder for temporary folders that nobody can enter (on some machines /tmp is not)."""
    for folder in (tempfile.gettempdir(), "/var/tmp", "/dev/shm"):
        probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                "ls", folder], capture_output=True, timeout=60)
        if probe.returncode == 0:
            return folder
    return None


def _nobody_can_run_python() -> bool:
    if not LINUX or os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
         "import grader.sandbox.worker.isolation"], capture_output=True, timeout=60, cwd="/")
    return probe.returncode == 0 and _open_to_nobody() is not None


@pytest.mark.skipif(ISO.landlock_abi < 1 or not _nobody_can_run_python(),
                    reason="needs root, setpriv, Landlock and an interpreter nobody can run")
def test_unprivileged_user_is_isolated_too() -> None:
    # pytest's tmp_path is private to root; this folder is open to everyone, so only
    # the sandbox stands between nobody and the private file.
    base = Path(tempfile.mkdtemp(prefix="isolation-", dir=_open_to_nobody()))
    try:
        base.chmod(0o755)
        (base / "solutions").mkdir(mode=0o755)
        (base / "solutions" / "reference.py").write_text("SECRET = 42\n")
        (base / "scratch").mkdir()
        os.chown(base / "scratch", 65534, 65534)
        body = textwrap.dedent(f"""
        attempt("private", lambda: open({str(base / "solutions" / "reference.py")!r}).read())
        attempt("scratch", lambda: open({str(base / "scratch" / "f")!r}, "w").write("x"))
        """) + FORK_MANY
        result = run_isolated(body, base, max_processes=4,
                              argv_prefix=["setpriv", "--reuid=65534", "--regid=65534",
                                           "--clear-groups"])
        assert refused(result["private"])
        assert result["scratch"] == 1
        assert result["fork"]["error"] == "BlockingIOError"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_limit_message_names_the_limit() -> None:
    policy = Policy(memory_bytes=256 * MB, cpu_seconds=30, max_file_bytes=2 * MB)
    assert limit_message(policy, MemoryError()) == "the memory limit (256 MB) was reached"
    torch_error = RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to ...")
    assert out_of_memory(torch_error)
    assert not out_of_memory(RuntimeError("shape mismatch"))
    if hasattr(signal, "SIGXCPU"):
        assert limit_message(policy, signum=signal.SIGXCPU) == (
            "the CPU time limit (30 s) was reached")
    assert limit_message(policy, ValueError("x")) is None
    # Landlock's refusal of a program run or a file outside the sandbox's paths, where
    # "Permission denied" alone read like the file's mode; not a learner's own raise.
    refused = PermissionError(errno.EACCES, "Permission denied", "sleep")
    assert limit_message(policy, refused).startswith("the sandbox refused it:")
    assert limit_message(policy, PermissionError("not yours")) is None


@pytest.mark.parametrize(("code", "shown"), [(None, ""), (3, "3 "), ("bye", "bye ")])
def test_sys_exit_in_a_method_is_said_as_such(code: object, shown: str) -> None:
    # Its message was its code alone: "raised SystemExit: " for a bare sys.exit().
    from grader.sandbox.worker.describe import describe_error

    said = describe_error(SystemExit(code), "/kata/problems/02-last-logits/solution.py")
    assert said["type"] == "SystemExit"
    assert said["message"].startswith(f"{shown}"), said
    assert "sys.exit() was called: a method returns its answer" in said["message"], said
