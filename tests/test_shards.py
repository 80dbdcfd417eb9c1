"""`gradebook --shard K/N` and `--merge`: a class graded in shares and joined again
is the class graded at once; and the workflows that do it on GitHub Actions parse."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from gradebooks import finished_gradebook

from grader.classroom.gradebook.shards import SHARD_FILE, shard_of, shard_spec

CROP = "01-crop-context"


def gradebook(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grader", "gradebook", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_shards_deal_learners_in_name_order() -> None:
    learners = {name: Path(name) for name in "abcde"}
    assert list(shard_of(learners, 1, 2)) == ["a", "c", "e"]
    assert list(shard_of(learners, 2, 2)) == ["b", "d"]
    assert list(shard_of(learners, 3, 3)) == ["c"]
    assert list(shard_of(learners, 4, 9)) == ["d"] and not shard_of(learners, 7, 9)
    assert shard_spec("2/4") == (2, 4)


@pytest.mark.parametrize("spec", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_an_impossible_shard_is_a_usage_error(spec: str, tmp_path: Path) -> None:
    done = gradebook(tmp_path, "--shard", spec, "--out", tmp_path / "out")
    assert done.returncode == 2 and "K/N" in done.stderr


def test_merge_is_given_no_roster(tmp_path: Path) -> None:
    done = gradebook(tmp_path, "--merge", tmp_path, "--out", tmp_path / "out")
    assert done.returncode == 2


def test_shards_merged_equal_one_run(tmp_path: Path) -> None:
    roster = tmp_path / "roster"
    solved = ROOT / "solutions" / CROP / "solution.py"
    starter = ROOT / "data" / "starters" / CROP / "solution.py"
    for name, source in {"amy": solved, "bo": starter, "cat": None, "dan": solved}.items():
        (roster / name / CROP).mkdir(parents=True)
        if source is not None:
            shutil.copy(source, roster / name / CROP / "solution.py")
    common = ("crop-context", "--jobs", "2", "--junit", "--allow-unisolated", "-q")

    whole, one, two, merged = (tmp_path / n for n in ("whole", "one", "two", "merged"))
    # The three runs at once, as on three machines.
    runs = [subprocess.Popen([sys.executable, "-m", "grader", "gradebook", str(roster), *common,
                              "--out", str(out), *shard], cwd=ROOT, text=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for out, shard in ((whole, ()), (one, ("--shard", "1/2")), (two, ("--shard", "2/2")))]
    for run in runs:
        _, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr[-3000:]
    assert sorted(p.name for p in one.glob("[!.]*.json")) == ["amy.json", "cat.json"]
    assert json.loads((two / SHARD_FILE).read_text()) == {"shard": "2/2"}
    assert not (whole / SHARD_FILE).exists()
    done = gradebook("--merge", one, two, "--out", merged)
    assert done.returncode == 0, done.stderr[-3000:]

    table = (whole / "gradebook.csv").read_text()
    assert (merged / "gradebook.csv").read_text() == table
    assert table.splitlines()[1].startswith("amy,1,1,")
    files = sorted(p.name for p in whole.iterdir())
    assert sorted(p.name for p in merged.iterdir()) == files
    for name in ("amy", "bo", "cat", "dan"):
        graded = json.loads((whole / f"{name}.json").read_text())
        joined = json.loads((merged / f"{name}.json").read_text())
        assert [t["status"] for t in joined["tests"]] == [t["status"] for t in graded["tests"]]
    # The merged state lets a later merge-free run skip everyone whose files are unchanged.
    state = json.loads((merged / ".gradebook-state.json").read_text())
    assert state == json.loads((whole / ".gradebook-state.json").read_text())

    twice = gradebook("--merge", one, one, two, "--out", tmp_path / "twice")
    assert twice.returncode == 2 and "shard 1/2 is both" in twice.stderr
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "gradebook.csv").write_text(
        "learner,problems_passed,problems_total,score,max_score,decode\n")
    (tmp_path / "other" / SHARD_FILE).write_text(json.dumps({"shard": "2/2"}))
    mixed = gradebook("--merge", one, tmp_path / "other", "--out", tmp_path / "mixed")
    assert mixed.returncode == 2 and "other problems" in mixed.stderr


def finished_shard(folder: Path, shard: str | None, learners: list[str]) -> Path:
    """A gradebook folder as a shard run leaves it, without grading anyone."""
    lines = ["learner,problems_passed,problems_total,score,max_score,crop-context"]
    lines += [f"{name},1,1,3,3,pass" for name in learners]
    return finished_gradebook(folder, "\n".join(lines) + "\n", shard)


def test_a_merge_without_a_shard_fails_naming_it(tmp_path: Path) -> None:
    one = finished_shard(tmp_path / "one", "1/3", ["amy", "dan"])
    three = finished_shard(tmp_path / "three", "3/3", ["cat"])
    done = gradebook("--merge", one, three, "--out", tmp_path / "merged")
    assert done.returncode == 2 and "2/3" in done.stderr and "1/3" not in done.stderr
    assert not (tmp_path / "merged" / "gradebook.csv").exists()

    partial = gradebook("--merge", one, three, "--out", tmp_path / "merged", "--allow-partial")
    assert partial.returncode == 0, partial.stderr
    assert "2/3" in partial.stderr
    table = (tmp_path / "merged" / "gradebook.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in table[1:]] == ["amy", "cat", "dan"]
    assert not (tmp_path / "merged" / SHARD_FILE).exists()

    two = finished_shard(tmp_path / "two", "2/3", ["bo"])
    whole = gradebook("--merge", three, one, two, "--out", tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    assert len((tmp_path / "whole" / "gradebook.csv").read_text().splitlines()) == 5


def test_a_learner_in_two_gradebooks_does_not_merge(tmp_path: Path) -> None:
    first = finished_shard(tmp_path / "first", None, ["amy"])
    second = finished_shard(tmp_path / "second", None, ["amy", "bo"])
    done = gradebook("--merge", first, second, "--out", tmp_path / "merged")
    assert done.returncode == 2 and "amy is in both" in done.stderr


@pytest.mark.parametrize("shares", [("1/2", "2/3"), ("1/2", "1/2"), ("1/2", None)])
def test_shards_of_different_splits_do_not_merge(shares: tuple, tmp_path: Path) -> None:
    folders = [finished_shard(tmp_path / f"s{i}", share, [f"learner{i}"])
               for i, share in enumerate(shares)]
    done = gradebook("--merge", *folders, "--out", tmp_path / "merged", "--allow-partial")
    assert done.returncode == 2, done.stderr


def test_a_shard_run_records_its_share(tmp_path: Path) -> None:
    from grader.classroom.gradebook.shards import record, recorded

    record(tmp_path, (2, 5))
    assert recorded(tmp_path) == (2, 5)
    record(tmp_path, None)
    assert recorded(tmp_path) is None


def test_workflows_are_valid_yaml() -> None:
    yaml = pytest.importorskip("yaml")
    files = sorted((ROOT / ".github").rglob("*.yml"))
    assert {f.name for f in files} >= {"grade-class.yml", "autograde.yml"}
    for file in files:
        workflow = yaml.safe_load(file.read_text())
        # PyYAML reads the key `on` as True.
        assert workflow.get("on", workflow.get(True)), file
        assert workflow["jobs"], file
    grade_class = yaml.safe_load((ROOT / ".github" / "workflows" / "grade-class.yml").read_text())
    inputs = grade_class[True]["workflow_dispatch"]["inputs"]
    assert {"roster", "shards"} <= set(inputs)
    assert "merge" in grade_class["jobs"]


def test_the_merge_job_fails_when_a_shard_failed() -> None:
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "grade-class.yml").read_text())
    merge = workflow["jobs"]["merge"]
    # It runs after a failed shard, to name it, and never merges a partial set.
    assert "always()" in merge["if"]
    runs = " ".join(step.get("run", "") for step in merge["steps"])
    assert "gradebook --merge" in runs and "--allow-partial" not in runs
    failing = [s for s in merge["steps"] if s.get("if") == "needs.grade.result != 'success'"]
    assert failing and "exit 1" in failing[0]["run"]


def test_a_merge_again_keeps_no_junit_report_its_shard_no_longer_has(tmp_path: Path) -> None:
    one = finished_shard(tmp_path / "one", "1/2", ["amy"])
    two = finished_shard(tmp_path / "two", "2/2", ["bo"])
    (one / "amy.junit.xml").write_text("<testsuites/>\n")
    merged = tmp_path / "merged"
    assert gradebook("--merge", one, two, "--out", merged).returncode == 0
    assert (merged / "amy.junit.xml").is_file()
    # amy graded again without --junit: her shard's JUnit report is gone (a run
    # removes the one an earlier run wrote), and a merge into the same folder must
    # not keep its own copy of it beside her new report.
    (one / "amy.junit.xml").unlink()
    assert gradebook("--merge", one, two, "--out", merged).returncode == 0
    assert not (merged / "amy.junit.xml").exists()
