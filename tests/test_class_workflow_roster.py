"""grade-class.yml with a roster file: the grade and merge steps' scripts, run here
with a stand-in gpt-kata that records what it is asked, pass the roster, deadline and
late policy on, read private repositories with ROSTER_TOKEN through git's config
only, and upload no clones."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

yaml = pytest.importorskip("yaml")

WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "grade-class.yml").read_text())
STAND_IN = f"""#!{sys.executable}
import json, os, pathlib, sys
args = sys.argv[1:]
seen = {{k: v for k, v in os.environ.items() if k.startswith("GIT_CONFIG")}}
with open(os.environ["RECORD"], "a") as handle:
    handle.write(json.dumps({{"args": args, "env": seen}}) + "\\n")
if "--merge" in args:
    out = pathlib.Path(args[args.index("--out") + 1])
    out.mkdir(exist_ok=True)
    (out / "gradebook.csv").write_text("learner,problems_passed,problems_total,score,max_score\\n")
sys.exit(int(os.environ.get("EXIT", "0")))
"""


def step(job: str, starts: str) -> dict:
    (found,) = [s for s in WORKFLOW["jobs"][job]["steps"] if s.get("name", "").startswith(starts)]
    return found


def run_step(tmp_path: Path, job: str, starts: str, **env: str) -> tuple[int, list[dict], str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "gpt-kata").write_text(STAND_IN)
    (bin_dir / "gpt-kata").chmod(0o755)
    record = tmp_path / "record.jsonl"
    record.unlink(missing_ok=True)
    script = step(job, starts)["run"]
    assert "${{" not in script  # inputs reach the script as variables, never as code
    done = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
                     f"{os.environ['PATH']}",
             "RECORD": str(record), "GITHUB_WORKSPACE": "/ws",
             "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "PYTHONPATH": str(ROOT),
             **env})
    lines = record.read_text().splitlines() if record.exists() else []
    calls = [json.loads(line) for line in lines]
    return done.returncode, calls, done.stdout + done.stderr


def test_the_workflow_takes_a_roster_file_and_its_deadline() -> None:
    inputs = WORKFLOW[True]["workflow_dispatch"]["inputs"]
    assert {"roster-file", "repo-url", "deadline", "late-policy", "late-penalty"} <= set(inputs)
    assert len(inputs) <= 10  # what workflow_dispatch allows
    grading = step("grade", "Grade shard")["env"]
    assert grading["ROSTER_FILE"] == "${{ inputs.roster-file }}"
    assert grading["ROSTER_TOKEN"] == "${{ secrets.ROSTER_TOKEN }}"
    assert step("merge", "Merge")["env"]["ROSTER_FILE"] == "${{ inputs.roster-file }}"


def test_a_shard_grades_the_roster_files_repositories(tmp_path: Path) -> None:
    code, calls, output = run_step(
        tmp_path, "grade", "Grade shard", ROSTER="roster", ROSTER_FILE="course/roster.csv",
        REPO_URL="https://github.com/org/kata-{learner}", DEADLINE="2026-12-01T23:59Z",
        LATE_POLICY="grace:2h", LATE_PENALTY="10%/day", ROSTER_TOKEN="secret-token",
        PROBLEMS="crop-context decode", SHARD="2/3")
    assert code == 0, output
    (call,) = calls
    assert call["args"] == [
        "gradebook", "--roster", "/ws/course/roster.csv",
        "--repo-url", "https://github.com/org/kata-{learner}",
        "--deadline", "2026-12-01T23:59Z", "--late-policy", "grace:2h",
        "--late-penalty", "10%/day",
        "crop-context", "decode", "--shard", "2/3", "--out", "/ws/shard", "--junit"]
    # The token reaches git as an http header for github.com, never an argument.
    assert call["env"]["GIT_CONFIG_COUNT"] == "1"
    assert call["env"]["GIT_CONFIG_KEY_0"] == "http.https://github.com/.extraheader"
    header = call["env"]["GIT_CONFIG_VALUE_0"].removeprefix("AUTHORIZATION: basic ")
    assert base64.b64decode(header) == b"x-access-token:secret-token"
    assert "secret-token" not in output


def test_without_a_roster_file_a_shard_grades_the_folder(tmp_path: Path) -> None:
    code, calls, output = run_step(tmp_path, "grade", "Grade shard", ROSTER="roster",
                                   ROSTER_FILE="", DEADLINE="2026-12-01T23:59Z",
                                   ROSTER_TOKEN="", PROBLEMS="", SHARD="1/1")
    assert code == 0, output
    assert calls[0]["args"] == ["gradebook", "/ws/roster", "--shard", "1/1",
                                "--out", "/ws/shard", "--junit"]
    assert not calls[0]["env"]
    # A usage error stops the shard; a learner not graded (exit 1) does not.
    assert run_step(tmp_path, "grade", "Grade shard", ROSTER="r", SHARD="1/1", EXIT="2")[0] == 2
    assert run_step(tmp_path, "grade", "Grade shard", ROSTER="r", SHARD="1/1", EXIT="1")[0] == 0


def test_the_merge_gives_every_roster_entry_a_row(tmp_path: Path) -> None:
    for k in (1, 2):
        (tmp_path / "shards" / f"gradebook-shard-{k}").mkdir(parents=True)
    code, calls, output = run_step(tmp_path, "merge", "Merge", ROSTER_FILE="course/roster.csv")
    assert code == 0, output
    assert calls[0]["args"] == [
        "gradebook", "--merge", "shards/gradebook-shard-1", "shards/gradebook-shard-2",
        "--out", "gradebook", "--canvas", "gradebook/canvas.csv",
        "--moodle", "gradebook/moodle.csv", "--roster", "course/roster.csv"]
    code, calls, output = run_step(tmp_path, "merge", "Merge", ROSTER_FILE="")
    assert code == 0 and "--roster" not in calls[0]["args"], output
    assert run_step(tmp_path, "merge", "Merge", ROSTER_FILE="", EXIT="2")[0] == 2


def test_a_shard_uploads_no_clones() -> None:
    (upload,) = [s for s in WORKFLOW["jobs"]["grade"]["steps"]
                 if s.get("uses", "").startswith("actions/upload-artifact")]
    paths = upload["with"]["path"].split()
    assert "shard/" in paths and "!shard/.repos/" in paths
    checkout = WORKFLOW["jobs"]["grade"]["steps"][0]
    assert checkout["uses"].startswith("actions/checkout")
    assert checkout["with"]["persist-credentials"] is False
