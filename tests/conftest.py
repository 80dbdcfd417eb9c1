"""Shared helpers: run the grader as a learner or CI would, and read its JSON."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import pytest
import tiers

# Every test process, and every grader it starts, computes with one thread: the
# cores are shared by pytest-xdist's workers, and with more threads than cores
# OpenMP's waiting threads slow tiny tensor work down many times over.
os.environ.setdefault("OMP_NUM_THREADS", "1")
if "torch" in sys.modules and os.environ["OMP_NUM_THREADS"].isdigit():
    # torchtyping's pytest plugin imports torch before this file runs, and torch has
    # read the variable by then: in a run without xdist the tests computed with every
    # core, and a sum split across threads rounds differently.
    sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
# Attacks on the grader, each a submission of its own (tests/test_hostile.py).
HOSTILE = TESTS / "hostile"
CHECKS = ROOT / "grader" / "checks"


def examples(slug: str) -> Path:
    """A problem's learner-style submissions, beside its check module: each a right
    answer written another way or a known mistake, said by its expected.toml."""
    return CHECKS / slug.replace("-", "_") / "examples"


def problem_of(folder: Path) -> str:
    """The slug of the problem whose examples `folder` is (examples' inverse): its
    expected.toml does not name it."""
    return folder.parent.name.replace("_", "-")


def example_folders() -> list[Path]:
    """Every problem's examples folder that says what its submissions are expected to get."""
    return sorted(path.parent for path in CHECKS.glob("*/examples/expected.toml"))

WITHOUT_XDIST = ("pytest-xdist is not installed (or -p no:xdist): the suite runs in one "
                 "process; `pip install -e '.[dev]'` spreads it over every core")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # addopts in pyproject.toml spreads the suite with pytest-xdist's --numprocesses
    # and --dist (the dev extra). Without the plugin those options would be unknown
    # and pytest would refuse to start: accept and ignore them, and say so in the header.
    if pluginmanager.hasplugin("xdist"):
        return
    group = parser.getgroup("xdist stand-in")
    group.addoption("--numprocesses", dest="numprocesses", default=None,
                    help="ignored: pytest-xdist is not installed")
    group.addoption("--dist", dest="dist", default="no",
                    help="ignored: pytest-xdist is not installed")


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = [] if config.pluginmanager.hasplugin("xdist") else [WITHOUT_XDIST]
    if config.option.markexpr == tiers.DEFAULT_MARKEXPR:
        # `python -m pytest tests/test_release.py` selects nothing, since the default
        # tier leaves the release tier out: say so before the run, under xdist too.
        lines.append(f"the default tier: left out {', '.join(tiers.DEFAULT_EXCLUDES)}; "
                     "run one with -m NAME (tests/tiers.py)")
    return lines


def _registry() -> tuple[list[str], list[str]]:
    """The problems' slugs and folders, from the registry every part of the kata reads."""
    from grader.registry import problems

    return [p.slug for p in problems()], [p.folder for p in problems()]


def pytest_configure(config: pytest.Config) -> None:
    # A problem's slug is a marker (`-m swiglu`, `-m top-k`) whichever tier its tests
    # sit in; the tiers' markers are listed in pyproject.toml.
    for slug in _registry()[0]:
        config.addinivalue_line("markers", f"{slug}: the tests of problem {slug}")


# Every test id this session collected, before `-m` deselected any, when it collected
# the whole suite: tests/test_tiers.py reads it instead of collecting the suite again.
WHOLE_SUITE = pytest.StashKey[list[str]]()


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its tier and its problems, from tests/tiers.py."""
    if [Path(arg).resolve() for arg in config.args] in ([], [TESTS]):
        config.stash[WHOLE_SUITE] = [item.nodeid for item in items]
    slugs, folders = _registry()
    for item in items:
        test_id = item.nodeid.removeprefix("tests/")
        tier = tiers.tier_of(test_id)
        if tier:
            item.add_marker(tier)
        for slug in tiers.problems_of(test_id, slugs, folders):
            item.add_marker(slug)
    # The trains tier's tests take minutes each. Run with other tiers, they come first:
    # pytest-xdist's worksteal hands each worker a part of the list in order, so they
    # start at once, and no core is left waiting at the end for one begun last.
    items.sort(key=lambda item: not item.get_closest_marker("trains"))


# The start of a `python -I -c` run in a learners' copy: its own `grader` (the
# kata's runtime modules it holds, such as grader.reuse) is the one imported, never
# the kata's installed here, so whatever the copy needs of the kata beyond them fails.
# The kata's editable install finds its modules by their full names (grader.classroom,
# say) whatever `grader` was imported: its finder is taken out, as a learner's
# machine has none.
COPY_ONLY = ("import os, sys; sys.path.insert(0, '.'); "
             "kata = lambda f: getattr(f, '__module__', '').startswith('__editable__'); "
             "sys.meta_path[:] = [f for f in sys.meta_path if not kata(f)]; "
             "sys.path_hooks[:] = [h for h in sys.path_hooks if not kata(h)]; "
             "sys.path_importer_cache.clear(); import grader; "
             "assert os.path.dirname(os.path.abspath(grader.__file__)) == "
             "os.path.abspath('grader'), 'not the copy s grader: ' + grader.__file__; ")


def imported_afresh(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Modules this test imports anew (a stand-in of the copy's package, say), and
    forgets with its end: what was in sys.modules before is put back, what was not is
    removed, so that no later test in the process imports a stand-in whose folder is
    gone (a copy's training.py once read its cases.json from one)."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)  # remembered as it was
        del sys.modules[name]


def module_from(path: Path, name: str) -> ModuleType:
    """Import the Python file `path` as module `name` (registered, as dataclasses need)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@functools.cache
def reference_module(folder: str) -> ModuleType:
    """The reference solution of problem `folder` ("09-top-k"), imported once."""
    return module_from(ROOT / "solutions" / folder / "solution.py",
                       f"reference_{folder.replace('-', '_')}")


def reference_solution(folder: str) -> Any:
    """A fresh instance of the reference `Solution` of problem `folder`."""
    return reference_module(folder).Solution()


@dataclass
class GradeRun:
    code: int
    report: dict | None
    stdout: str
    stderr: str

    def messages(self) -> str:
        return "\n".join(t["message"] or "" for t in (self.report or {}).get("tests", []))


def run_grade(*args: str | Path, tmp_path: Path, timeout: float = 600) -> GradeRun:
    """`python -m grader grade ARGS --json FILE`, in a subprocess, as a user runs it."""
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "grader", "grade", *map(str, args), "--json", str(report_path)],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return GradeRun(done.returncode, report, done.stdout, done.stderr)


def readline_within(stream: IO[str], seconds: float) -> str:
    """The next line of a child's output, or "" if none comes within `seconds`.

    A thread reads it, since select() waits on pipes only on POSIX; one left
    waiting ends when the child is killed and its pipe closes.
    """
    lines: queue.Queue[str] = queue.Queue(maxsize=1)
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=seconds)
    except queue.Empty:
        return ""


class BatchServer:
    """A `tests/grade_batch.py --serve` of this test process, started on first use, with
    `environment` added to its own (an instructor's seed, say, read as the checks load)."""

    def __init__(self, environment: dict[str, str] | None = None) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.errors: IO[str] | None = None
        self.environment = environment or {}

    def grade(self, jobs: list[dict], timeout: float) -> list[dict]:
        if self.process is None or self.process.poll() is not None:
            # lives as long as the server it collects from
            self.errors = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115
            self.process = subprocess.Popen(
                [sys.executable, str(Path(__file__).parent / "grade_batch.py"), "--serve"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True,
                cwd=ROOT, env={**os.environ, **self.environment})
        assert self.process.stdin and self.process.stdout
        # Paths, a job's "file" and its "files"' values, go as their text.
        self.process.stdin.write(json.dumps(jobs, default=str) + "\n")
        self.process.stdin.flush()
        line = readline_within(self.process.stdout, timeout)
        if not line:
            self.process.kill()
            self.process.wait()
            self.process = None
            assert self.errors is not None
            self.errors.seek(0)
            pytest.fail(f"the grading process gave no reports within {timeout:g} s:\n"
                        f"{self.errors.read()[-3000:]}")
        return json.loads(line)


_SERVER = BatchServer()


def grade_batch(jobs: list[dict], tmp_path: Path, timeout: float = 900) -> list[dict]:
    """Grade several submissions in this test process's grading process.

    Each report has the shape `gpt-kata grade --json` writes. A crash of the
    grading process fails the calling test with its stderr.
    """
    return _SERVER.grade(jobs, timeout)


def grade_in_folder(problems: Path, slug: str, tmp_path: Path) -> dict:
    """A learner's file of `slug` in their problems folder, graded sandboxed as `gpt-kata
    grade --submission <problems> <slug>` grades it (the sandbox grants what the file's
    place grants, Policy.for_submission, whoever names the file), in this test process's
    grading process. Graded under Landlock, or the test fails saying so."""
    from grader.registry import find

    file = problems / find(slug).folder / "solution.py"
    [report] = grade_batch([{"problem": slug, "file": file, "sandbox": True}], tmp_path)
    assert any(layer.startswith("landlock") for layer in report["isolation"]), report
    return report


def messages(report: dict) -> str:
    return "\n".join(t["message"] or "" for t in report.get("tests", []))


@pytest.fixture
def grade_here(tmp_path: Path):
    """Grade one problem's file in this test process's grading process (`grade_batch`),
    sandboxed as `gpt-kata grade` grades: the report its `--json` writes, without a
    command's start-up (torch imported twice, by the command and by its fork server).
    For what a grade reports; what the command itself does is tested through `grade`."""
    def _grade(problem: str, file: str | Path) -> dict:
        [report] = grade_batch([{"problem": problem, "file": file, "sandbox": True}], tmp_path)
        return report

    return _grade


@pytest.fixture
def grade(tmp_path: Path):
    def _grade(*args: str | Path) -> GradeRun:
        return run_grade(*args, tmp_path=tmp_path)

    return _grade
