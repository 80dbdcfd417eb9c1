"""The CI workflow runs the suite on every platform and Python the README names,
each with a torch that pyproject.toml's range gives that platform."""

from __future__ import annotations

import itertools
import sys

import pytest
from conftest import ROOT
from packaging.requirements import Requirement
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Where each runner label runs, in the terms of pyproject's environment markers.
RUNNERS = {
    "ubuntu-latest": {"sys_platform": "linux", "platform_machine": "x86_64"},
    "windows-latest": {"sys_platform": "win32", "platform_machine": "AMD64"},
    "macos-latest": {"sys_platform": "darwin", "platform_machine": "arm64"},
    "macos-15-intel": {"sys_platform": "darwin", "platform_machine": "x86_64"},
}
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]


def expand(matrix: dict) -> list[dict]:
    """A strategy matrix's jobs, as GitHub Actions documents them: the product, less
    the excludes; then each include is added to every job it does not contradict on
    an original key (values added by earlier includes may be overwritten), or else
    becomes a job of its own."""
    original = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    jobs = [dict(zip(original, values, strict=True))
            for values in itertools.product(*original.values())]
    jobs = [job for job in jobs if not any(all(job.get(k) == v for k, v in ex.items())
                                           for ex in matrix.get("exclude", []))]
    for extra in matrix.get("include", []):
        fits = [job for job in jobs
                if all(job[k] == v for k, v in extra.items() if k in original)]
        for job in fits:
            job.update(extra)
        if not fits:
            jobs.append(dict(extra))
    return jobs


def torch_range(environment: dict[str, str], python: str) -> list[Requirement]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = [Requirement(line) for line in config["project"]["dependencies"]]
    where = {**environment, "python_version": python, "python_full_version": f"{python}.0"}
    return [r for r in wanted if r.name == "torch" and (r.marker is None
                                                        or r.marker.evaluate(where))]


@pytest.fixture(scope="module")
def workflow() -> dict:
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())


def test_every_platform_and_python_is_tested(workflow: dict) -> None:
    jobs = expand(workflow["jobs"]["test"]["strategy"]["matrix"])
    covered = {(job["os"], job["python"]) for job in jobs}
    intel_313 = ("macos-15-intel", "3.13")  # torch for Intel Macs stops at Python 3.12
    assert covered == set(itertools.product(RUNNERS, PYTHONS)) - {intel_313}
    assert len(jobs) == len(covered)


def test_each_job_installs_a_torch_in_pyproject_range(workflow: dict) -> None:
    jobs = expand(workflow["jobs"]["test"]["strategy"]["matrix"])
    for job in jobs:
        (wanted,) = torch_range(RUNNERS[job["os"]], job["python"])
        assert wanted.specifier.contains(job["torch"]), (job, str(wanted))
    # the pin the goldens were made with, and the lowest torch of each range (one
    # range for most platforms, one for Intel Macs) on some platform it is for
    assert ("ubuntu-latest", "2.13.0") in {(job["os"], job["torch"]) for job in jobs}
    tested: dict[str, set[Version]] = {}
    for job in jobs:
        (wanted,) = torch_range(RUNNERS[job["os"]], job["python"])
        tested.setdefault(str(wanted.specifier), set()).add(Version(job["torch"]))
    assert len(tested) == 2, tested
    for specifier, versions in tested.items():
        lowest = min(Version(s.split(">=")[1]) for s in specifier.split(",") if ">=" in s)
        assert any(v.release[:2] == lowest.release[:2] for v in versions), (specifier, versions)


def test_no_job_installs_a_transformers_that_turns_its_torch_off(workflow: dict) -> None:
    # transformers 5 (what the dev extra's unbounded range installs) disables its
    # PyTorch models under torch 2.6, so its Llama tests would fail rather than skip.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dev = [Requirement(line) for line in config["project"]["optional-dependencies"]["dev"]]
    for job in expand(workflow["jobs"]["test"]["strategy"]["matrix"]):
        where = {**RUNNERS[job["os"]], "python_version": job["python"], "extra": "dev"}
        if any(r.name == "transformers" and (r.marker is None or r.marker.evaluate(where))
               for r in dev):
            assert Version(job["torch"]) >= Version("2.6"), job


def test_ruff_runs_once_and_every_job_runs_the_readme_test_command(workflow: dict) -> None:
    runs = {name: [step.get("run", "") for step in job["steps"]]
            for name, job in workflow["jobs"].items()}
    assert [name for name, steps in runs.items() if "ruff check ." in steps] == ["lint"]
    assert "python -m pytest" in runs["test"]
    assert "python -m pytest" in (ROOT / "README.md").read_text(encoding="utf-8")
