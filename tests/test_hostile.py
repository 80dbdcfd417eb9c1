"""Broken and hostile submissions fail cleanly, with a plain message, and grading goes on.

Starting a grade costs seconds, so attacks are graded in batches: a folder laid
out like problems/ holds one hostile file per problem, and a reference solution
for a problem graded after them shows that grading went on. The batches run at
the same time, once per module; each attack then has a test of its own that
reads its problem's part of the report.

A hostile file is written for crop-context; for another problem its method is
renamed, and module-level settings (`KIND = ...`) are filled in by the test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import pytest
from conftest import HOSTILE, ROOT
from filelock import FileLock

from grader.registry import find
from grader.sandbox.wire.encoding import MAX_DEPTH, ProtocolError, decode
from grader.sandbox.wire.frames import read_frame
from grader.sandbox.wire.replies import read_call_reply, unreadable
from grader.sandbox.worker.machine import probe

HOSTILE = HOSTILE
UNREADABLE = "the submission's process sent an unreadable reply"

# Problems whose checks call one Solution method, so any hostile file can stand in;
# the quickest to grade first.
SLOTS = ["last-logits", "decode", "sample", "crop-context", "softmax", "generate",
         "temperature", "top-k", "top-k-top-p", "top-p", "greedy", "eos-stop"]
# Graded after the hostile problems of a batch (problems go in order); must pass.
REFERENCE = "no-repeat-ngram"

ISOLATION = probe()
LINUX = sys.platform.startswith("linux")
# The layer each sandbox attack is stopped by. Where it is missing, the attack is
# not run at all: unchecked, it could stop the grader or write into the repository.
LAYERS = {
    "reads-private-files": (ISOLATION.landlock_abi >= 1, "Landlock"),
    "writes-outside-scratch": (ISOLATION.landlock_abi >= 1, "Landlock"),
    "connects-out": (ISOLATION.seccomp, "the seccomp socket filter"),
    "signals-others": (ISOLATION.namespaces or ISOLATION.landlock_abi >= 6,
                       "a PID namespace or Landlock ABI 6"),
    "detaches": (ISOLATION.namespaces, "a PID namespace"),
    "allocates-3gb": (LINUX and ISOLATION.rlimits, "a memory limit (Linux rlimits)"),
    "reads-environment": (LINUX, "the sandbox's clean environment (Linux)"),
}


@dataclass
class Attack:
    name: str  # the test id
    file: str  # in tests/hostile
    expect: list[str]  # words the learner must see in this problem's messages
    settings: dict[str, object] = field(default_factory=dict)  # module constants to set
    slot: str | None = None  # a problem of its own, where the file needs that one


@dataclass
class Batch:
    attacks: list[Attack]
    timeout: float
    env: dict[str, str] = field(default_factory=dict)
    slots: dict[str, Attack] = field(default_factory=dict)  # problem -> attack
    report: dict | None = None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0

    def messages(self, name: str) -> str:
        slug = next(s for s, a in self.slots.items() if a.name == name)
        return "\n".join(t["message"] or "" for t in self.tests(slug))

    def tests(self, slug: str) -> list[dict]:
        assert self.report is not None, self.stderr[-3000:]
        return [t for t in self.report["tests"] if t["problem"] == slug]

    def status(self, slug: str) -> str:
        assert self.report is not None, self.stderr[-3000:]
        return {p["problem"]: p["status"] for p in self.report["problems"]}[slug]


def method_of(slug: str) -> str:
    return find(slug).methods[0]


def hostile_source(attack: Attack, slug: str) -> str:
    text = (HOSTILE / attack.file).read_text()
    # \b leaves names like check_crop_context alone: only the method is renamed.
    text = re.sub(r"\bcrop_context\b", method_of(slug), text)
    for name, value in attack.settings.items():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value!r}", text, flags=re.M)
        assert count == 1, f"{attack.file} has no single `{name} = ...` line"
    return text


def lay_out(root: Path, batch: Batch) -> None:
    free = [s for s in SLOTS if s != REFERENCE and s not in {a.slot for a in batch.attacks}]
    for attack in batch.attacks:
        slug = attack.slot or free.pop(0)
        batch.slots[slug] = attack
        folder = root / find(slug).folder
        folder.mkdir(parents=True)
        (folder / "solution.py").write_text(hostile_source(attack, slug))
    reference = find(REFERENCE)
    (root / reference.folder).mkdir()
    shutil.copy(reference.reference, root / reference.folder / "solution.py")


def start(batch: Batch, root: Path) -> subprocess.Popen:
    lay_out(root, batch)
    problems = [*batch.slots, REFERENCE]
    command = [sys.executable, "-m", "grader", "grade", *problems, "--submission", str(root),
               "--timeout", str(batch.timeout), "--json", str(root / "report.json"), "-q"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **batch.env})


# --- the batches ---------------------------------------------------------------------------
FORGERIES = {  # KIND in forges_reply.py -> the reason the learner is given
    "negative-shape": "Expected `int` >= 0 - at `$.shape[0]`",
    "shape-bytes-mismatch": "does not match its shape",
    "unknown-dtype": "Invalid enum value 'complex64' - at `$.dtype`",
    "generator-state-3-bytes": "a generator state of 3 bytes",
    "huge-element-count": "Expected `int` <= 16777216 - at `$.shape[0]`",
    "nesting-600": "nested too deeply",
    "string-100mb": "larger than the",
    "error-not-an-object": "Expected `object`, got `str` - at `$.error`",
}

ODD_VALUES = {  # KIND in returns_odd_value.py -> what the learner is told
    "nesting-600": f"nested more than {MAX_DEPTH} levels deep",
    "string-100mb": "a str of 104857600 characters",
    "complex-tensor": "a tensor of dtype complex64",
    "huge-int": "an int of more than 4300 digits",
    "unprintable-error": "Unprintable: <Unprintable whose message cannot be printed>",
    "argument-made-unreadable": "a tensor of dtype complex64",
}

# Files that cannot be loaded at all: one plain line, with file and line.
UNLOADABLE = {
    "syntax_error.py": "solution.py:2: SyntaxError",
    "missing_class.py": "no class Solution in solution.py",
    "missing_method.py": "class Solution has no method {method}()",
    "sys_exit_on_import.py": "SystemExit: bye",
}

SECRET_NAME, SECRET = "GPT_KATA_TEST_SECRET", "s3cr3t-of-the-grader-7f1e"


@dataclass(frozen=True)
class Setting:
    """What the sandbox attacks are told: where to write, whom to call, what to name."""

    folder: Path  # the test's own folder, outside any scratch
    token: str = "gptkata-attack"  # in the name of every file the attacks plant
    daemon: str = "gk-daemon"  # the detached process's name (at most 15 bytes)
    port: int = 0
    unix_path: str = ""
    outside: tuple[int, ...] = ()  # process ids outside the sandbox


def protocol_batch() -> Batch:
    attacks = [Attack(f"forged-{kind}", "forges_reply.py", [UNREADABLE, reason],
                      {"KIND": kind}) for kind, reason in FORGERIES.items()]
    attacks += [Attack("noisy", "noisy_and_reads_stdin.py", [], slot="crop-context"),
                Attack("returns-object", "returns_object.py", ["cannot read"])]
    return Batch(attacks, timeout=3)


def odd_batch() -> Batch:
    attacks = [Attack(f"returns-{kind}", "returns_odd_value.py", [words], {"KIND": kind})
               for kind, words in ODD_VALUES.items()]
    attacks += [Attack("mutates-input", "mutates_input.py",
                       ["changed its input `context` in place"], slot="crop-context")]
    attacks += [Attack(f"unloadable-{name}", name, [words]) for name, words in UNLOADABLE.items()]
    return Batch(attacks, timeout=3)


def judged_batch() -> Batch:
    """Answers the worker carries that the judges must read without an error of their own:
    one raised while a failure's message is made ended the whole grade."""
    return Batch([Attack("returns-a-nan-token", "returns_odd_value.py",
                         ["the sampled token has dtype torch.float32"], {"KIND": "a-nan-token"},
                         slot="sample"),
                  Attack("returns-a-float-for-logits", "returns_odd_value.py",
                         ["should be a Tensor, but it is a float"], {"KIND": "a-float"},
                         slot="top-k"),
                  Attack("returns-a-long-int-for-logits", "returns_odd_value.py",
                         ["should be a Tensor, but it is an int"], {"KIND": "a-long-int"},
                         slot="top-p"),
                  Attack("replaces-harness", "replaces_harness.py",
                         ["clip_gradients is not shaped as it returns it"],
                         slot="clip-grad-norm")], timeout=10)


def sandbox_batch(setting: Setting) -> Batch:
    attacks = [
        Attack("reads-private-files", "reads_private_files.py", ["blocked solutions"]),
        Attack("writes-outside-scratch", "writes_outside_scratch.py", ["blocked"],
               {"TOKEN": setting.token, "OUTSIDE": str(setting.folder),
                "SENTINEL": str(setting.folder / "sentinel.txt"),
                "DECOY": str(setting.folder / "decoy.txt")}),
        Attack("connects-out", "connects_out.py", ["blocked tcp"],
               {"PORT": setting.port, "UNIX_PATH": setting.unix_path}),
        Attack("signals-others", "signals_others.py", ["unreachable"],
               {"OUTSIDE": list(setting.outside)}),
        Attack("detaches", "detaches.py", ["started a detached process"],
               {"MARKER": setting.daemon,
                "TARGET": str(setting.folder / "daemon-wrote-this.txt")}),
        Attack("allocates-3gb", "allocates_3gb.py", ["the memory limit (1024 MB) was reached"]),
        Attack("reads-environment", "reads_environment.py", ["variables; secret-looking"]),
        Attack("hang", "hang.py", ["no answer within 2 seconds"]),
        Attack("segfault", "segfault.py", ["killed by signal"]),
        Attack("os-exit", "os_exit.py", ["exited with code 3"]),
        Attack("writes-protocol", "writes_protocol.py", [UNREADABLE]),
    ]
    attacks = [a for a in attacks if LAYERS.get(a.name, (True, ""))[0]]
    return Batch(attacks, timeout=2, env={SECRET_NAME: SECRET})


def all_batches(setting: Setting) -> dict[str, Batch]:
    return {"protocol": protocol_batch(), "odd": odd_batch(), "judged": judged_batch(),
            "sandbox": sandbox_batch(setting)}


class Listeners:
    """Loopback servers a submission must not reach: TCP, UDP and a Unix socket."""

    def __init__(self, folder: Path) -> None:
        self.tcp = socket.create_server(("127.0.0.1", 0))
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.udp.bind(("127.0.0.1", self.port))
        except OSError:
            self.udp.bind(("127.0.0.1", 0))  # the datagram then goes nowhere: still a test
        # Unix socket paths hold about 100 bytes: a short one, in the test's folder if it fits.
        path = folder / "listen.sock"
        self.unix_path = str(path) if len(str(path)) < 100 else f"/tmp/gk-{os.getpid()}.sock"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind(self.unix_path)
        self.unix.listen()

    def heard(self) -> list[str]:
        heard = []
        for name, sock, receive in (("tcp", self.tcp, lambda s: s.accept()),
                                    ("udp", self.udp, lambda s: s.recv(100)),
                                    ("unix", self.unix, lambda s: s.accept())):
            sock.setblocking(False)
            try:
                receive(sock)
                heard.append(name)
            except BlockingIOError:
                pass
        return heard

    def close(self) -> None:
        for sock in (self.tcp, self.udp, self.unix):
            sock.close()
        Path(self.unix_path).unlink(missing_ok=True)


def planted_files(setting: Setting) -> list[Path]:
    """Where writes_outside_scratch.py tries to write, existing or not."""
    import site

    import grader

    package = Path(grader.__file__).resolve().parent
    name = f"{setting.token}.txt"
    paths = [package / "__pycache__" / f"{setting.token}.cpython-311.pyc",
             package / f"{setting.token}.py", package / f"{setting.token}-dir",
             package.parent / name, Path("/tmp") / name, setting.folder / name]
    paths += [Path(p) / f"{setting.token}.pth" for p in site.getsitepackages()]
    paths += [Path(p) / f"{setting.token}.pth" for p in sys.path if p.endswith("site-packages")]
    paths += list(setting.folder.glob(f"**/{name}"))
    return paths


def grade_all(folder: Path) -> dict:
    """Grade every batch at once; what the tests need, as JSON-ready data."""
    folder.mkdir(parents=True)
    listeners = Listeners(folder)
    setting = Setting(folder, token=f"gptkata-attack-{os.getpid()}",
                      daemon=f"gk-daemon-{os.getpid() % 100000}", port=listeners.port,
                      unix_path=listeners.unix_path, outside=(os.getpid(), os.getppid()))
    sentinel = folder / "sentinel.txt"
    sentinel.write_text("its mode and times must not change")
    sentinel.chmod(0o644)
    os.utime(sentinel, (1_700_000_000, 1_700_000_000))
    (folder / "decoy.txt").write_text("must stay where it is")
    made = all_batches(setting)
    started = time.monotonic()
    try:
        running = {name: start(batch, folder / name) for name, batch in made.items()}
        results: dict = {"batches": {}}
        for name, process in running.items():
            stdout, stderr = process.communicate(timeout=600)
            report = folder / name / "report.json"
            results["batches"][name] = {
                "slots": {slug: a.name for slug, a in made[name].slots.items()},
                "report": json.loads(report.read_text()) if report.exists() else None,
                "stdout": stdout, "stderr": stderr, "seconds": time.monotonic() - started}
        results["heard"] = listeners.heard()
    finally:
        listeners.close()
    # A folder this test may not read (/tmp can be root's own, for an ordinary user)
    # the worker, with the same uid and less, could not write in either.
    planted = [p for p in planted_files(setting) if os.path.lexists(p)]
    for path in planted:
        # Inert, but nothing of a test may stay in the repository.
        if path.is_dir():
            path.rmdir()
        else:
            path.unlink()
    sentinel_stat = sentinel.stat()
    results.update(planted=[str(p) for p in planted], daemon=setting.daemon,
                   sentinel={"mode": stat.S_IMODE(sentinel_stat.st_mode),
                             "mtime": sentinel_stat.st_mtime},
                   daemon_target=str(folder / "daemon-wrote-this.txt"),
                   decoy_stayed=(folder / "decoy.txt").exists())
    return results


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The batches graded once per test run, whichever pytest-xdist worker comes first."""
    base = tmp_path_factory.getbasetemp()
    # Under xdist every worker has a folder of its own inside one for the whole run.
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    results = shared / "hostile-results.json"
    with FileLock(str(shared / "hostile.lock")):
        if not results.exists():
            results.write_text(json.dumps(grade_all(shared / "hostile")))
    return json.loads(results.read_text())


@pytest.fixture(scope="module")
def batches(graded: dict) -> dict[str, Batch]:
    made = all_batches(Setting(Path("unused")))
    for name, batch in made.items():
        data = graded["batches"][name]
        by_name = {a.name: a for a in batch.attacks}
        batch.slots = {slug: by_name[attack] for slug, attack in data["slots"].items()}
        batch.report, batch.stdout, batch.stderr = data["report"], data["stdout"], data["stderr"]
        batch.seconds = data["seconds"]
    return made


def every_attack() -> list[tuple[str, str]]:
    made = all_batches(Setting(Path("unused")))
    return [(name, a.name) for name, b in made.items() for a in b.attacks]


# --- what holds for every batch ------------------------------------------------------------
@pytest.mark.parametrize("name", ["protocol", "odd", "judged", "sandbox"])
def test_batch_ends_with_a_report_and_no_traceback(batches, name):
    batch = batches[name]
    assert batch.report is not None, batch.stderr[-3000:]
    assert "Traceback" not in batch.stdout + batch.stderr
    assert batch.report["message"] is None  # no internal grader error
    assert "internal grader error" not in json.dumps(batch.report)
    assert "could not name the mistake" not in json.dumps(batch.report)
    # Every hostile problem was graded, and the problem after them still passes.
    for slug in batch.slots:
        assert batch.tests(slug), slug
    assert batch.status(REFERENCE) == "pass", batch.tests(REFERENCE)


@pytest.mark.parametrize(("batch_name", "name"), every_attack())
def test_attack_fails_with_a_plain_message(batches, batch_name, name):
    batch = batches[batch_name]
    slug, attack = next((s, a) for s, a in batch.slots.items() if a.name == name)
    messages = batch.messages(name)
    if name == "noisy":
        assert batch.status(slug) == "pass", messages
        return
    assert batch.status(slug) in ("fail", "error"), messages
    for words in attack.expect:
        assert words.format(method=method_of(slug)) in messages, messages
    if name.startswith("forged-"):
        assert "no answer within" not in messages  # refused at once, not timed out


# --- the protocol, case by case ------------------------------------------------------------
def test_noisy_output_is_captured_and_truncated(batches):
    batch = batches["protocol"]
    outputs = [t["output"] for t in batch.tests("crop-context") if t["output"]]
    assert outputs and outputs[0].startswith("debugging")
    assert all(len(o) <= 600 for o in outputs)  # truncated, with a visible marker
    # cut at a line end, saying how much was left out
    assert any(o.endswith("output truncated)") and "…" in o for o in outputs)


@pytest.mark.parametrize("name", sorted(UNLOADABLE))
def test_unloadable_submission_is_one_plain_line(batches, name):
    batch = batches["odd"]
    slug = next(s for s, a in batch.slots.items() if a.file == name)
    assert batch.status(slug) == "error"
    messages = {t["message"] for t in batch.tests(slug)}
    assert len(messages) == 1, messages
    (message,) = messages
    assert "\n" not in message


# {"type": "list", "items": [...]} in msgpack: a map of two, its tag, then its items.
LIST_OF_ONE = b"\x82\xa4type\xa4list\xa5items\x91"


@pytest.mark.parametrize("frame", [
    b"\x82\xa2ok\xc3\xa6result" + LIST_OF_ONE * 600 + b"\x01",
    b"\x91" * 100_000 + b"\xc0",
])
def test_a_deep_message_is_a_protocol_error_not_a_recursion_error(frame):
    import io
    import struct

    with pytest.raises(ProtocolError):
        read_frame(io.BytesIO(struct.pack(">I", len(frame)) + frame))


def tensor(dtype: str, shape: list, data: object) -> dict:
    return {"type": "tensor", "dtype": dtype, "shape": shape, "data": data}


@pytest.mark.parametrize("reply", [
    {"ok": True, "result": tensor("float32", [-1], b"")},
    {"ok": True, "result": tensor("float32", [0, 2**63 - 1], b"")},
    {"ok": True, "result": tensor("float32", [2**40], b"\0" * 4)},
    {"ok": True, "result": tensor("float32", [True], b"")},
    {"ok": True, "result": tensor("int64", [1], b"\0" * 7)},
    {"ok": True, "result": tensor("int64", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                           16, 17], b"")},
    {"ok": True, "result": {"type": "generator", "state": b"\0" * 5056}},  # all zeros
    {"ok": True, "result": {"type": "generator", "state": b"\1\2\3"}},
    {"ok": True, "result": {"type": "model", "kind": "random", "config": {"n_embd": 2**40},
                            "seed": 0}},
    {"ok": True, "result": {"type": "model", "kind": "run", "config": {}, "seed": 0,
                            "path": ["/etc"]}},
    {"ok": True, "result": {"type": "dict", "pairs": [[{"type": "list", "items": []}, 1]]}},
    {"ok": True, "result": {"type": "list", "items": [], "extra": 1}},
    {"ok": True, "result": {"type": "float", "text": "1e309"}},
    {"ok": True, "result": "x" * 1_000_001},
    {"ok": True, "result": 1, "model_calls": [[1, -1]]},
    {"ok": True, "result": 1, "model_changed": "yes"},
    {"ok": True, "result": 1, "after": {"zero": 1}},
    {"ok": True, "result": 1, "output": ["not", "text"]},
    {"ok": True, "result": 1, "output": "x\n", "output_cut": -1},
    {"ok": True, "result": 1, "output": "x\n", "output_cut": True},
    {"ok": True, "result": 1, "output": "x\n", "output_cut": "3"},
    {"ok": True, "result": 1, "output": "x\n", "output_cut": 1.5},
    {"ok": True, "result": 1, "output": "x\n", "output_cut": None},
    {"ok": True, "result": 1, "output": "x\n", "output_cut": 10**13},
    {"ok": True, "result": 1, "output": "", "output_cut": 5},
    {"error": {"type": "X", "message": "m"}, "output": "x\n", "output_cut": -2},
    {"error": {"type": "X", "message": "m", "line": "ten"}},
    {"error": {"type": "X", "message": "m", "frames": "not a list"}},
    {"ok": True},
])
def test_malformed_replies_are_protocol_errors(reply):
    with pytest.raises(ProtocolError) as caught:
        read_call_reply(msgspec.msgpack.decode(msgspec.msgpack.encode(reply)))
    assert unreadable(caught.value).startswith(UNREADABLE)


def test_the_lines_a_worker_left_out_come_as_a_count_beside_what_it_kept():
    reply = {"ok": True, "result": {"type": "list", "items": []}, "output": "a\nb\n",
             "output_cut": 7}
    output = read_call_reply(reply)["output"]
    assert output.items == ("a\n", "b\n", 7)
    assert output.text == "a\nb\n… (7 more lines; output truncated)\n"


def test_honest_values_still_decode():
    import torch

    from grader.sandbox.wire.encoding import encode

    generator = torch.Generator().manual_seed(3)
    nested: object = 1
    for _ in range(MAX_DEPTH - 1):
        nested = [nested]
    value = {"t": torch.arange(6).view(2, 3), "g": generator, "n": nested,
             "b": torch.tensor([True, False]), "e": torch.empty(0, 5)}
    back = decode(msgspec.msgpack.decode(msgspec.msgpack.encode(encode(value))))
    assert torch.equal(back["t"], value["t"]) and torch.equal(back["b"], value["b"])
    assert torch.equal(back["g"].get_state(), generator.get_state())
    assert back["e"].shape == (0, 5) and back["n"] == nested


# --- the sandbox, attack by attack ---------------------------------------------------------
def needs(attack: str) -> None:
    available, layer = LAYERS[attack]
    if not available:
        pytest.skip(f"{layer} is not available on this machine, so {attack} was not run")


def test_private_files_cannot_be_read(batches):
    needs("reads-private-files")
    batch = batches["sandbox"]
    messages = batch.messages("reads-private-files")
    assert "LEAKED" not in messages, messages
    for what in ("solutions", "goldens", "load_goldens", "checks", "listing"):
        assert f"blocked {what} (PermissionError)" in messages, messages
    for what in ("hardlink", "symlink", "inherited"):  # other routes to the same files
        assert f"blocked {what}" in messages, messages


def test_nothing_is_written_outside_scratch(batches, graded):
    needs("writes-outside-scratch")
    messages = batches["sandbox"].messages("writes-outside-scratch")
    assert "WROTE scratch" in messages, messages  # the one place that is the submission's
    written = [part for part in re.split(r"; |\n", messages)
               if "WROTE" in part and "WROTE scratch" not in part]
    assert not written, written
    assert graded["planted"] == []
    assert graded["decoy_stayed"], "a file outside scratch was moved into it"


def test_file_modes_outside_scratch_cannot_be_changed(batches, graded):
    # Landlock does not govern chmod, utime or xattrs, and inside the user namespace the
    # worker owns whatever the grader's user owns: only the seccomp filter stops these.
    needs("writes-outside-scratch")
    if not ISOLATION.seccomp:
        pytest.skip("the seccomp filter is not available on this machine")
    messages = batches["sandbox"].messages("writes-outside-scratch")
    assert "CHANGED" not in messages, messages
    assert graded["sentinel"] == {"mode": 0o644, "mtime": 1_700_000_000}, messages


def test_no_connection_leaves_the_sandbox(batches, graded):
    needs("connects-out")
    messages = batches["sandbox"].messages("connects-out")
    assert "CONNECTED" not in messages, messages
    assert graded["heard"] == []


def test_signals_do_not_reach_outside_and_grading_finishes(batches):
    needs("signals-others")
    batch = batches["sandbox"]
    messages = batch.messages("signals-others")
    assert "REACHABLE" not in messages, messages
    assert batch.status(REFERENCE) == "pass"


def test_detached_process_ends_with_the_grade(batches, graded):
    needs("detaches")
    assert "started a detached process" in batches["sandbox"].messages("detaches")
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            seen = (entry / "comm").read_text() + (entry / "cmdline").read_bytes().decode(
                errors="replace")
        except OSError:
            continue
        if graded["daemon"] in seen:
            alive.append(entry.name)
    assert not alive, f"detached processes still running: {alive}"
    assert not Path(graded["daemon_target"]).exists()


def test_memory_limit_is_named(batches):
    needs("allocates-3gb")
    messages = batches["sandbox"].messages("allocates-3gb")
    assert "the memory limit (1024 MB) was reached" in messages, messages


def test_grader_environment_does_not_leak(batches):
    needs("reads-environment")
    batch = batches["sandbox"]
    messages = batch.messages("reads-environment")
    assert "secret-looking: []" in messages, messages
    assert SECRET not in json.dumps(batch.report) + batch.stdout + batch.stderr
