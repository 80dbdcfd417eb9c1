"""`gradebook --merge DIR... --roster FILE`: every learner on the roster gets a row,
one that no merged gradebook holds an error row saying why, and the merge needs no
third-party package (the workflow's merge job installs none)."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

from gradebooks import finished_gradebook, merge_without_dependencies

HEADER = ("learner,problems_passed,problems_total,score,max_score,crop-context,decode,"
          "commit,late_minutes,late_penalty\n")


def shard(folder: Path, k: int, n: int, rows: dict[str, str]) -> Path:
    """A shard's gradebook as `gradebook --roster --shard K/N` leaves it."""
    return finished_gradebook(folder, HEADER + "".join(f"{n},{r}\n" for n, r in rows.items()),
                              f"{k}/{n}", reports=rows)


def merge(tmp_path: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return merge_without_dependencies(*args, "--out", tmp_path / "merged", cwd=tmp_path)


def table(tmp_path: Path) -> dict[str, dict[str, str]]:
    with (tmp_path / "merged" / "gradebook.csv").open(newline="") as handle:
        return {row["learner"]: row for row in csv.DictReader(handle)}


def classroom50_roster(tmp_path: Path) -> Path:
    roster = tmp_path / "roster.csv"
    roster.write_text("username,first_name,last_name,email,section,github_id,role\n"
                      "ada,Ada,L,,A,1,student\nbo,Bo,B,,A,2,student\n"
                      "cy,Cy,C,,B,3,student\nprof,P,P,,,4,teacher\n")
    return roster


def test_every_learner_on_the_roster_gets_a_row(tmp_path: Path) -> None:
    one = shard(tmp_path / "one", 1, 2, {"ada": "2,2,20,20,pass,pass,abc123,0,0"})
    two = shard(tmp_path / "two", 2, 2, {"bo": "1,2,10,20,pass,fail,def456,5,1"})
    roster = classroom50_roster(tmp_path)

    # Without the roster, the merge knows only whom the shards hold.
    done = merge(tmp_path, one, two)
    assert done.returncode == 0, done.stderr
    assert set(table(tmp_path)) == {"ada", "bo"}

    done = merge(tmp_path, one, two, "--roster", roster)
    assert done.returncode == 1, done.stderr  # cy was not graded
    rows = table(tmp_path)
    assert set(rows) == {"ada", "bo", "cy"}  # prof is a teacher, not a learner
    assert rows["bo"]["score"] == "10" and rows["bo"]["commit"] == "def456"
    assert (rows["cy"]["problems_passed"], rows["cy"]["problems_total"], rows["cy"]["score"],
            rows["cy"]["max_score"], rows["cy"]["crop-context"], rows["cy"]["decode"],
            rows["cy"]["commit"], rows["cy"]["late_penalty"]) == (
        "0", "2", "0", "20", "error", "error", "", "")
    report = json.loads((tmp_path / "merged" / "cy.json").read_text())
    assert report["status"] == "error" and "no gradebook merged" in report["message"]
    # Out of the class's total, like the row: a sum over the class stays right.
    assert (report["score"], report["max_score"]) == (0, 20)
    assert "cy" in done.stderr


def test_a_missing_shard_allowed_is_named_in_its_learners_rows(tmp_path: Path) -> None:
    one = shard(tmp_path / "one", 1, 2, {"ada": "2,2,20,20,pass,pass,abc123,0,0",
                                          "cy": "0,2,0,20,fail,fail,0a0a0a,0,0"})
    roster = classroom50_roster(tmp_path)
    done = merge(tmp_path, one, "--roster", roster)
    assert done.returncode == 2 and "2/2" in done.stderr  # still refused unless allowed
    done = merge(tmp_path, one, "--roster", roster, "--allow-partial")
    assert done.returncode == 1, done.stderr
    assert table(tmp_path)["bo"]["decode"] == "error"
    report = json.loads((tmp_path / "merged" / "bo.json").read_text())
    assert "2/2" in report["message"]


def test_a_roster_merge_reads_the_roster_first(tmp_path: Path) -> None:
    one = shard(tmp_path / "one", 1, 1, {"ada": "2,2,20,20,pass,pass,abc123,0,0"})
    roster = tmp_path / "roster.csv"
    roster.write_text("student,repo_link\nada,x\n")
    done = merge(tmp_path, one, "--roster", roster)
    assert done.returncode == 2 and "found student,repo_link" in done.stderr
