"""The tiers' table (tests/tiers.py) names real tests, and pyproject.toml agrees with it."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest
import tiers
from conftest import ROOT, WHOLE_SUITE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYTEST = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "tool"]["pytest"]["ini_options"]


def every_test_id(config: pytest.Config) -> list[str]:
    """Every test the suite holds, whatever its tier, as ids relative to tests/: as this
    session collected them if it collected the whole suite, else collected again."""
    if WHOLE_SUITE in config.stash:
        return [i.removeprefix("tests/") for i in config.stash[WHOLE_SUITE]]
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "-p", "no:xdist", "-m", ""],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line.removeprefix("tests/") for line in done.stdout.splitlines()
            if line.startswith("tests/") and "::" in line]


def test_every_entry_names_a_test_and_every_tier_has_tests(
        pytestconfig: pytest.Config) -> None:
    ids = every_test_id(pytestconfig)
    names = {i.partition("[")[0] for i in ids}
    files = {i.partition("::")[0] for i in ids}
    for entry in tiers.entries():
        where = ids if "[" in entry else names if "::" in entry else files
        assert entry in where, f"tests/tiers.py names {entry!r}, which is no test"
    counted = {tier: 0 for tier in (*tiers.TIERS, "")}
    for test_id in ids:
        counted[tiers.tier_of(test_id)] += 1
    empty = [tier for tier, n in counted.items() if tier != tiers.TRAINS and not n]
    assert not empty, f"tiers without tests: {empty}"


def test_smoke_tests_belong_to_a_heavy_tier() -> None:
    # A smoke test is one a heavy tier would otherwise run: else it is no exception.
    for test_id in tiers.SMOKE:
        name = test_id.partition("[")[0]
        assert (tiers.tier_of(name) in tiers.HEAVY
                or tiers.tier_of(name.partition("::")[0]) in tiers.HEAVY), test_id
        assert tiers.tier_of(test_id) == ""


def test_the_default_run_leaves_out_the_heavy_tiers_and_pyproject_lists_every_tier() -> None:
    assert f"-m '{tiers.DEFAULT_MARKEXPR}'" in " ".join(PYTEST["addopts"].split())
    listed = [marker.partition(":")[0] for marker in PYTEST["markers"]]
    assert sorted(listed) == sorted(tiers.TIERS)


def test_a_test_goes_by_its_most_specific_entry() -> None:
    assert tiers.tier_of("test_release.py::test_anything[x]") == "release"
    assert tiers.tier_of("test_submissions.py::test_every_patch_applies[top-k/a.py]") == "check"
    assert tiers.tier_of("test_submissions.py::test_submissions_grade_as_expected[gpt-1]") \
        == "submissions"
    assert tiers.tier_of("test_submissions.py::test_submissions_grade_as_expected[top-k-0]") \
        == ""
    assert tiers.tier_of("test_wording.py::test_anything") == ""
    # One case of a parametrized test may sit apart from the others.
    assert tiers.tier_of("test_cli.py::test_ctrl_c_stops_a_grade_without_a_grader_error[1]") \
        == "sandbox"
    assert tiers.tier_of("test_cli.py::test_ctrl_c_stops_a_grade_without_a_grader_error[2]") \
        == ""


SLUGS = ["top-k", "top-p", "top-k-top-p", "generate", "swiglu", "grouped-query-attention"]
FOLDERS = ["09-top-k", "10-top-p", "11-top-k-top-p", "06-generate", "33-swiglu",
           "34-grouped-query-attention"]


def problems(test_id: str) -> set[str]:
    return tiers.problems_of(test_id, SLUGS, FOLDERS)


def test_problems_are_found_by_whole_names_only() -> None:
    assert problems("test_submissions.py::t[top-k-top-p-0]") == {"top-k-top-p"}
    assert problems("test_submissions.py::t[top-k-2]") == {"top-k"}
    assert problems("test_submissions.py::t[top-k-top-p/argmax.py]") == {"top-k-top-p"}
    assert problems("test_play.py::t[09-top-k]") == {"top-k"}
    assert problems("test_launch_spawned.py::t[generate..top-p]") == {"generate", "top-p"}
    assert problems("test_top_k_top_p_reference.py::t") == {"top-k-top-p"}
    assert problems("test_top_k_reference.py::t[x]") == {"top-k"}
    assert problems("test_swiglu_gqa_reference.py::t") == {"swiglu", "grouped-query-attention"}
    assert problems("test_talk_stream.py::t[word]") == set()
    assert problems("test_cli.py::t[generating]") == set()


def test_ci_runs_every_tier_once() -> None:
    """.ci/run runs `python -m pytest` and then each heavy tier, each test once."""
    runs = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
            .splitlines() if line.strip().startswith("python -m pytest")]
    assert "python -m pytest" in runs, ".ci/run does not run the default tier"
    selected = []
    for run in runs:
        words = shlex.split(run)[3:]  # after `python -m pytest`
        if "-m" in words:
            expression = words[words.index("-m") + 1]
            selected += [word for word in expression.split() if word != "or"]
    assert sorted(selected) == sorted(tiers.DEFAULT_EXCLUDES), (
        f".ci/run runs the tiers {selected}; the default tier leaves out "
        f"{list(tiers.DEFAULT_EXCLUDES)}")


def test_the_platform_matrix_runs_every_tier_but_trains() -> None:
    """.github/workflows/ci.yml's test job runs the heavier tiers on every platform too:
    the spawned tier is macOS's and Windows's own path there."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(
        encoding="utf-8"))
    runs = [step.get("run", "") for step in workflow["jobs"]["test"]["steps"]]
    selected = []
    for run in runs:
        words = shlex.split(run) if run.startswith("python -m pytest") else []
        if "-m" in words[3:]:
            selected += [w for w in words[words.index("-m", 3) + 1].split() if w != "or"]
    assert "python -m pytest" in runs
    assert sorted(selected) == sorted(tiers.HEAVY), selected
