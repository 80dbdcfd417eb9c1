"""A regular install (a wheel, not an editable checkout) grades a kata folder.

The wheel is built from this checkout and installed into a fresh virtual
environment that borrows this one's packages (torch and the rest) through a .pth
file, so nothing is downloaded or reinstalled.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from grader.registry import problems

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def test_every_grader_folder_with_code_is_packaged() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    # Each problem's examples/ (learner-style submissions) is the suite's, not the package's.
    with_code = {".".join(p.parent.relative_to(ROOT).parts)
                 for p in (ROOT / "grader").rglob("*.py")
                 if "__pycache__" not in p.parts and "examples" not in p.parts}
    assert with_code <= listed, f"add to [tool.setuptools] packages: {with_code - listed}"


def run(*args: str | Path, cwd: Path | None = None, timeout: float = 120) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done.stdout


def build_wheel(out: Path) -> Path:
    # No build isolation: setuptools comes from this environment, not the network.
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "-q", "-w", out, ROOT)
    (found,) = out.glob("gpt_kata-*.whl")
    return found


def check_wheel_contents(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = ["grader/_kata/problems/registry.toml", "grader/checks/pytest.ini",
               *(f"grader/_kata/data/{n}" for n in ("config.json", "vocab.json", "goldens.json",
                                                    "manifest.json", "model.safetensors",
                                                    "corpus.txt"))]
    for p in problems():
        shipped += [f"grader/_kata/solutions/{p.folder}/solution.py",
                    f"grader/_kata/data/starters/{p.folder}/solution.py",
                    f"grader/checks/{p.checks.parent.name}/{p.checks.name}"]
    shipped += [f.relative_to(ROOT).as_posix() for f in (ROOT / "grader/checks").rglob("*.toml")
                if "examples" not in f.parts]
    assert not [n for n in shipped if n not in names]
    # Nor the suite's learner-style submissions, some of them right answers written otherwise.
    assert not [n for n in names if n.startswith("grader/checks/") and "/examples/" in n]
    # The learner's own files are never shipped: they come from the kata folder.
    assert not [n for n in names if n.startswith("grader/_kata/problems/")
                and not n.endswith("registry.toml")]


@pytest.mark.skipif(sys.platform == "win32", reason="the virtual environment's layout is POSIX")
def test_installed_grader_grades_the_kata_folder_it_runs_in(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheel")
    check_wheel_contents(wheel)
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    # Install before borrowing this environment's packages, so pip sees no other
    # gpt-kata to replace.
    run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
        "--no-index", wheel)
    inner = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
                 .strip())
    (inner / "borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    kata = tmp_path / "kata"
    shutil.copytree(ROOT / "data" / "starters", kata / "problems")
    shutil.copy(ROOT / "solutions" / "05-decode" / "solution.py", kata / "problems" / "05-decode")
    work = kata / "problems" / "05-decode"  # run from inside: the kata folder is found above
    report_path = tmp_path / "report.json"
    junit_path = tmp_path / "report.xml"
    done = subprocess.run([venv / "bin" / "gpt-kata", "grade", "decode", "crop-context",
                           "--json", report_path, "--junit", junit_path],
                          capture_output=True, text=True, cwd=work, timeout=180)
    assert done.returncode == 1, done.stderr[-2000:]
    report = json.loads(report_path.read_text())
    by_problem = {p["problem"]: p for p in report["problems"]}
    assert by_problem["decode"]["status"] == "pass"
    assert by_problem["crop-context"]["status"] == "error"  # the untouched starter
    assert by_problem["decode"]["submission"] == str(kata / "problems" / "05-decode"
                                                     / "solution.py")
    cases = ET.parse(junit_path).getroot().findall("testsuite/testcase")
    assert len(cases) == len(report["tests"])
    assert {c.get("classname") for c in cases
            if c.find("failure") is None and c.find("error") is None} == {"05-decode"}
    # The grader's files are its installed copies; the status lands in the kata folder.
    where = run(python, "-c", "from grader import paths; print(paths.SOLUTIONS, paths.INSTALLED)",
                cwd=work).split()
    assert Path(where[0]).is_relative_to(inner) and where[1] == "True"
    assert (kata / ".gpt-kata" / "status.json").is_file()


def test_the_suite_runs_without_pytest_xdist() -> None:
    # pyproject's addopts names xdist's options; without the plugin (a learner's
    # install has no dev extra) the tests still run, in one process, and say why.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist",
         "tests/test_wording.py::test_one_of_a_thing_is_singular"],
        capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    assert "pytest-xdist is not installed" in done.stdout
