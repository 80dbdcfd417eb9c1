"""Scores and report formats checked against their specs: the one scorer's points,
Exercism's 500-character output with a true count, its `error` status, JUnit's
<error> and <failure> read by a JUnit consumer, Gradescope's Markdown output, the
Canvas and Moodle import CSVs, the reports' provenance, and the workflows' actions."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import pytest
from conftest import ROOT
from gradebooks import finished_gradebook, merge_without_dependencies

from grader.classroom.gradescope_autograder import to_gradescope
from grader.grading.engine.plugin import TestResult as Result
from grader.registry import find
from grader.reports.junit import junit_tree
from grader.reports.report import ProblemSummary, Report, cut_output
from grader.reports.scoring import problem_score, score_report

jsonschema = pytest.importorskip("jsonschema")
yaml = pytest.importorskip("yaml")

# Exercism's test runner interface, version 3 (exercism/docs, building/tooling/
# test-runners/interface.md): status pass/fail/error; a message when the run errored;
# per test a name, a status and output of at most 500 characters. Our own fields are
# allowed beside these (the interface ignores what it does not know).
EXERCISM_SCHEMA = {
    "type": "object",
    "required": ["version", "status"],
    "properties": {
        "version": {"const": 3},
        "status": {"enum": ["pass", "fail", "error"]},
        "message": {"type": ["string", "null"]},
        "tests": {"type": "array", "items": {
            "type": "object",
            "required": ["name", "status"],
            "properties": {
                "name": {"type": "string"},
                "status": {"enum": ["pass", "fail", "error"]},
                "message": {"type": ["string", "null"]},
                "output": {"type": ["string", "null"], "maxLength": 500},
                "test_code": {"type": "string"},
                "task_id": {"type": "integer", "minimum": 1},
            }}},
    },
    "if": {"properties": {"status": {"const": "error"}}},
    "then": {"required": ["message"], "properties": {"message": {"type": "string"}}},
}
SHA256 = {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"}
# The provenance every JSON report carries (README, "The JSON report").
PROVENANCE_SCHEMA = {
    "type": "object",
    "required": ["grader", "mode", "isolation", "files", "packages", "time"],
    "additionalProperties": False,
    "properties": {
        "grader": {"type": "object", "required": ["version", "commit"],
                   "properties": {"version": {"type": ["string", "null"]},
                                  "commit": {"type": ["string", "null"]}}},
        "mode": {"enum": ["practice", "classroom"]},
        "isolation": {"type": "array", "items": {"type": "string"}},
        "files": {"type": "object", "additionalProperties": SHA256},
        "packages": {"type": "object", "required": ["torch", "pytest", "hypothesis"],
                     "additionalProperties": {"type": ["string", "null"]}},
        "time": {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$"},
    },
}


def a_report(tmp_path: Path, outcomes: dict[str, list[str]], output: str = "") -> Report:
    """A report of the given problems, each check's status as given."""
    summaries = []
    for slug, statuses in outcomes.items():
        problem = find(slug)
        submission = tmp_path / problem.folder / "solution.py"
        submission.parent.mkdir(parents=True, exist_ok=True)
        submission.write_text(f"# {slug}\n")
        results = [Result(f"check {i}", problem, status,
                              message="" if status == "pass" else f"{status} {i}",
                              output=output)
                   for i, status in enumerate(statuses)]
        summaries.append(ProblemSummary(problem, submission, results))
    return Report(summaries, "exact", {"python": "3"}, mode="classroom",
                  isolation=["user-namespace"])


# -- points ---------------------------------------------------------------------------

def test_points_are_whole_and_full_only_when_every_check_passes() -> None:
    assert problem_score(10, 4, 4) == 10
    assert problem_score(10, 3, 4) == 8  # 7.5, half up
    assert problem_score(10, 1, 4) == 3  # 2.5, half up
    assert problem_score(10, 23, 24) == 9  # 9.58 would round to 10: not all passed
    assert problem_score(10, 1, 24) == 0  # 0.42
    assert problem_score(10, 0, 5) == 0 and problem_score(10, 0, 0) == 0


def test_a_report_is_scored_out_of_every_problem_s_points(tmp_path: Path) -> None:
    report = a_report(tmp_path, {"crop-context": ["pass"] * 4,
                                 "decode": ["pass", "pass", "pass", "fail"],
                                 "softmax": ["error", "error"]}).to_json()
    assert [p["max_score"] for p in report["problems"]] == [10, 10, 10]
    assert [p["score"] for p in report["problems"]] == [10, 8, 0]
    assert (report["score"], report["max_score"]) == (18, 30)
    # Each check carries its share, so the checks of a problem add up to its points.
    decode = [t for t in report["tests"] if t["problem"] == "decode"]
    assert sum(t["max_score"] for t in decode) == pytest.approx(10)
    again = score_report(json.loads(json.dumps(report)))
    assert again == report  # scoring twice changes nothing


def test_a_registry_points_field_sets_a_problem_s_worth(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from grader import registry

    raw = registry.REGISTRY.read_text(encoding="utf-8")
    changed = raw.replace('slug = "decode"\n', 'slug = "decode"\npoints = 4\n', 1)
    table = tmp_path / "registry.toml"
    table.write_text(changed, encoding="utf-8")
    monkeypatch.setattr(registry, "REGISTRY", table)
    registry.problems.cache_clear()
    try:
        assert find("decode").points == 4 and find("softmax").points == 10
        report = a_report(tmp_path, {"decode": ["pass", "fail"]}).to_json()
        assert (report["score"], report["max_score"]) == (2, 4)
    finally:
        registry.problems.cache_clear()


# -- Exercism ---------------------------------------------------------------------------

def test_output_fits_exercism_s_cap_with_a_true_count() -> None:
    text = "".join(f"line {i}\n" for i in range(300))
    cut = cut_output(text, 500, whole=True)
    assert len(cut) <= 500
    kept = cut.splitlines()[:-1]
    assert kept == text.splitlines()[:len(kept)]
    said = int(re.search(r"\((\d+) more lines", cut).group(1))
    assert len(kept) + said == 300
    long = cut_output("x" * 2000 + "\nnext\n", 500, whole=True)
    assert len(long) <= 500 and "the line goes on, 1 more line" in long


def test_the_json_report_follows_exercism_v3(tmp_path: Path) -> None:
    printed = "".join(f"debug {i}\n" for i in range(400))
    report = a_report(tmp_path, {"decode": ["pass", "fail"]}, output=printed).to_json()
    jsonschema.validate(report, EXERCISM_SCHEMA)
    assert report["status"] == "fail" and report["message"] is None
    assert all(len(t["output"]) <= 500 for t in report["tests"])


def test_a_run_where_every_check_errored_is_an_error(tmp_path: Path) -> None:
    report = a_report(tmp_path, {"decode": ["error", "error"],
                                 "softmax": ["error"]}).to_json()
    jsonschema.validate(report, EXERCISM_SCHEMA)
    assert report["status"] == "error" and report["message"] == "error 0"
    mixed = a_report(tmp_path, {"decode": ["error", "fail"]}).to_json()
    assert mixed["status"] == "fail"


def test_every_json_report_has_provenance(tmp_path: Path) -> None:
    report = a_report(tmp_path, {"decode": ["pass"]}).to_json()
    jsonschema.validate(report["provenance"], PROVENANCE_SCHEMA)
    provenance = report["provenance"]
    graded = (tmp_path / "05-decode" / "solution.py").read_bytes()
    assert provenance["files"] == {"05-decode": hashlib.sha256(graded).hexdigest()}
    assert provenance["mode"] == "classroom" and provenance["isolation"] == ["user-namespace"]
    # The installed distributions' versions: PyPI's torch wheels for Windows and Linux
    # say 2.13.0 there while torch.__version__ adds the build (2.13.0+cpu, +cu130).
    from importlib import metadata
    assert provenance["packages"]["torch"] == metadata.version("torch")
    assert provenance["packages"]["hypothesis"] == metadata.version("hypothesis")
    assert datetime.fromisoformat(provenance["time"].replace("Z", "+00:00")).tzinfo


def test_the_commit_is_the_grader_s_own(tmp_path: Path) -> None:
    """Graded from inside another git repository (a learner's clone), the commit named
    is still the grader checkout's."""
    from grader.reports import provenance

    if not (ROOT / ".git").exists():
        pytest.skip("the grader is not a git checkout here")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=7", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    learner = tmp_path / "clone"
    learner.mkdir()
    subprocess.run(["git", "init", "-q", str(learner)], check=True)
    code = ("import os, sys; os.chdir(sys.argv[1]); "
            "from grader.reports.provenance import grader_commit; print(grader_commit())")
    env = {"GIT_DIR": str(learner / ".git"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code, str(learner)], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert head and head in done.stdout
    assert provenance.grader_commit() == done.stdout.strip()


# -- JUnit ----------------------------------------------------------------------------

def test_junit_tells_errors_from_failures_as_a_consumer_reads_them(tmp_path: Path) -> None:
    report = a_report(tmp_path, {"decode": ["pass", "fail", "error"],
                                 "softmax": ["pass", "pass"]}).to_json()
    path = tmp_path / "report.xml"
    junit_tree(report).write(path, encoding="utf-8", xml_declaration=True)
    root = ET.parse(path).getroot()
    decode = next(s for s in root.iter("testsuite") if s.get("name") == "05-decode")
    outcomes = {c.get("name"): [e.tag for e in c if e.tag in ("failure", "error")]
                for c in decode.iter("testcase")}
    assert outcomes == {"check 0": [], "check 1": ["failure"], "check 2": ["error"]}
    assert (decode.get("tests"), decode.get("failures"), decode.get("errors")) == ("3", "1", "1")
    junitparser = pytest.importorskip("junitparser")
    suites = junitparser.JUnitXml.fromfile(str(path))
    seen = {}
    for suite in suites:
        for case in suite:
            seen[suite.name, case.name] = [type(r).__name__ for r in case.result]
        if suite.name == "05-decode":
            assert (suite.failures, suite.errors) == (1, 1)
    assert seen["05-decode", "check 1"] == ["Failure"]
    assert seen["05-decode", "check 2"] == ["Error"]
    assert seen["03-softmax", "check 1"] == []


def test_junit_suites_carry_the_problem_points(tmp_path: Path) -> None:
    report = a_report(tmp_path, {"decode": ["pass", "fail"],
                                 "softmax": ["pass", "pass"]}).to_json()
    root = junit_tree(report).getroot()
    total = 0.0
    for suite in root.iter("testsuite"):
        assert list(suite)[0].tag == "properties"  # first, as JUnit's schema orders it
        props = {p.get("name"): float(p.get("value")) for p in suite.iter("property")}
        assert props["max_score"] == 10
        total += props["score"]
    assert total == report["score"] == 15


# -- Gradescope -----------------------------------------------------------------------

def test_gradescope_output_is_markdown_that_keeps_the_table(tmp_path: Path) -> None:
    from test_gradescope import validate

    report = a_report(tmp_path, {"decode": ["pass", "fail"],
                                 "softmax": ["pass", "pass"]}).to_json()
    results = to_gradescope(report, 1.0)
    validate(results)
    assert results["output_format"] == "md"
    fenced = re.search(r"```text\n(.*?)\n```", results["output"], re.S)
    assert fenced, results["output"]
    rows = fenced.group(1).splitlines()
    assert len(rows) == 2
    # Lined up: the status and the words after each number sit at the same place in
    # every row, and the rows are equally long.
    for word in ("fail", "checks", "points"):
        where = {row.find(word if word != "fail" else ("fail" if "fail" in row else "pass"))
                 for row in rows}
        assert len(where) == 1, rows
    assert len({len(row) for row in rows}) == 1, rows
    assert results["score"] == report["score"] == 15
    assert results["extra_data"]["provenance"] == report["provenance"]
    failed = to_gradescope({"message": "the grader could not run", "tests": []}, 0.1)
    validate(failed)
    jsonschema.validate(failed["extra_data"]["provenance"], PROVENANCE_SCHEMA)


def test_an_installed_bundle_names_the_commit_it_was_built_from(tmp_path: Path) -> None:
    from grader.classroom.gradescope_autograder import name_bundle_commit

    version = tmp_path / "COMMIT"
    commit = "0123456789abcdef0123456789abcdef01234567"
    version.write_text(f"{commit}\n")
    graded = to_gradescope({"message": "x", "tests": []}, 0.1)
    graded["extra_data"]["provenance"]["grader"]["commit"] = None
    name_bundle_commit(graded, version)
    assert graded["extra_data"]["provenance"]["grader"]["commit"] == commit
    # The file holds the commit and nothing else, or it names none.
    version.write_text(f"https://x:secret@example.org/kata.git at commit {commit}\n")
    graded["extra_data"]["provenance"]["grader"]["commit"] = None
    name_bundle_commit(graded, version)
    assert graded["extra_data"]["provenance"]["grader"]["commit"] is None
    assert "secret" not in json.dumps(graded)
    version.write_text(f"{commit}\n")
    graded["extra_data"]["provenance"]["grader"]["commit"] = "v1-dirty"
    name_bundle_commit(graded, version)  # a checkout's own describe wins
    assert graded["extra_data"]["provenance"]["grader"]["commit"] == "v1-dirty"


def test_a_learner_the_gradebook_could_not_grade_has_provenance_too() -> None:
    from grader.classroom.gradebook.outputs import failed_report

    report = failed_report("grading took too long")
    jsonschema.validate(report, EXERCISM_SCHEMA)
    jsonschema.validate(report["provenance"], PROVENANCE_SCHEMA)


# -- LMS exports ----------------------------------------------------------------------

GRADEBOOK = ("learner,problems_passed,problems_total,score,max_score,crop-context,decode\n"
             "ada,2,2,20,20,pass,pass\n"
             "'=HYPERLINK(\"x\"),1,2,10,20,pass,fail\n"
             "cy,0,2,0,0,error,error\n")


def read(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_canvas_and_moodle_exports_follow_their_import_formats(tmp_path: Path) -> None:
    from grader.classroom.gradebook.lms_export import write_exports

    table = tmp_path / "gradebook.csv"
    table.write_text(GRADEBOOK, encoding="utf-8")
    ids = tmp_path / "ids.csv"
    ids.write_text("learner,name,canvas_id,sis_user_id,sis_login_id,section,email,idnumber\n"
                   "ada,\"Lovelace, Ada\",101,S1,ada@uni,Sec A,ada@example.org,A-1\n",
                   encoding="utf-8")
    write_exports(table, str(tmp_path / "canvas.csv"), str(tmp_path / "moodle.csv"),
                  str(ids), "gpt-kata (55)")
    canvas = read(tmp_path / "canvas.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         "gpt-kata (55)"]
    assert canvas[1][0] == "Points Possible" and canvas[1][-1] == "20"
    assert canvas[2] == ["Lovelace, Ada", "101", "S1", "ada@uni", "Sec A", "20"]
    # Not in the mapping: known by their folder's name, kept from running as a formula.
    assert canvas[3][0] == "'=HYPERLINK(\"x\")" and canvas[3][1:] == ["", "", "", "", "10"]
    assert canvas[4][0] == "cy" and canvas[4][-1] == ""  # not graded: no grade, not 0
    moodle = read(tmp_path / "moodle.csv")
    assert moodle[0] == ["Full name", "Username", "ID number", "Email address", "gpt-kata (55)"]
    assert moodle[1] == ["Lovelace, Ada", "ada", "A-1", "ada@example.org", "20"]
    assert moodle[2][1] == "'=HYPERLINK(\"x\")" and moodle[3][-1] == ""


def test_a_mapping_without_a_learner_column_is_refused(tmp_path: Path) -> None:
    from grader.classroom.gradebook.lms_export import read_ids
    from grader.learner.errors import UsageError

    bad = tmp_path / "ids.csv"
    bad.write_text("name,email\nada,a@b\n", encoding="utf-8")
    with pytest.raises(UsageError, match="learner"):
        read_ids(bad)


# -- workflows ------------------------------------------------------------------------

# The first majors of these actions that run on Node 24 (their action.yml says node24).
NODE24 = {"actions/checkout": 5, "actions/setup-python": 6, "actions/upload-artifact": 6,
          "actions/download-artifact": 7, "actions/cache": 5}
WORKFLOWS = [ROOT / ".github" / "workflows" / name for name in ("autograde.yml",
                                                                  "grade-class.yml")]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_use_node24_majors_of_their_actions(workflow: Path) -> None:
    uses = re.findall(r"uses:\s*([\w/-]+)@v(\d+)", workflow.read_text(encoding="utf-8"))
    assert uses
    for action, major in uses:
        assert int(major) >= NODE24[action], f"{workflow.name}: {action}@v{major}"


def test_the_merge_job_installs_no_torch_and_needs_none(tmp_path: Path) -> None:
    jobs = yaml.safe_load((ROOT / ".github/workflows/grade-class.yml").read_text())["jobs"]
    installs = [s["run"] for s in jobs["merge"]["steps"] if "pip install" in s.get("run", "")]
    assert installs and all("--no-deps" in run and "torch" not in run for run in installs)
    # And the merge runs so: with every third-party package unimportable.
    shard = finished_gradebook(tmp_path / "shard", GRADEBOOK)
    out = tmp_path / "merged"
    done = merge_without_dependencies(shard, "--out", out, "--canvas", out / "canvas.csv",
                                      cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: cy was not graded
    grades = {line[0]: line[-1] for line in read(out / "canvas.csv")[2:]}
    assert grades == {"ada": "20", "'=HYPERLINK(\"x\")": "10", "cy": ""}


def test_a_long_print_is_counted_whole_through_every_cut(tmp_path: Path,
                                                         grade_here) -> None:
    """A call that prints 3000 lines (far past what the worker keeps of it) is reported
    with 3000 lines in all: the ones shown and the count of the rest."""
    submission = tmp_path / "solution.py"
    # Prints, then answers wrongly, so the failing check shows the call's output.
    submission.write_text(
        "class Solution:\n"
        "    def crop_context(self, context, context_length):\n"
        "        for i in range(3000):\n"
        "            print(f'line {i}')\n"
        "        return context[:, :0]\n")
    report = grade_here("crop-context", submission)
    shown = [t["output"] for t in report["tests"] if t["output"]]
    assert shown, report["tests"]
    for output in shown:
        assert len(output) <= 500
        lines = output.splitlines()
        said = int(re.search(r"\((\d+) more lines", lines[-1]).group(1))
        assert lines[:-1] == [f"line {i}" for i in range(len(lines) - 1)]
        assert len(lines) - 1 + said == 3000, output
