"""Gradescope: a report turned into results.json, checked against Gradescope's
documented format, and a bundle built and run here the way Gradescope runs it."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT
from test_held_in_memory import attack_for

from grader.classroom.gradescope_autograder import to_gradescope
from grader.registry import problems

jsonschema = pytest.importorskip("jsonschema")

VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
# Gradescope's results.json, from its autograder specifications: every field it
# documents, and nothing else.
RESULTS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": FORMAT,
        "test_output_format": FORMAT,
        "test_name_format": FORMAT,
        "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY,
        "extra_data": {"type": "object"},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "score": {"type": "number"},
                    "max_score": {"type": "number", "minimum": 0},
                    "status": {"enum": ["passed", "failed"]},
                    "name": {"type": "string"},
                    "number": {"type": "string"},
                    "output": {"type": "string"},
                    "output_format": FORMAT,
                    "name_format": FORMAT,
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "visibility": VISIBILITY,
                    "extra_data": {"type": "object"},
                },
                "additionalProperties": False,
            },
        },
    },
    # The score may be left out only when the tests carry scores.
    "anyOf": [{"required": ["score"]},
              {"required": ["tests"],
               "properties": {"tests": {"items": {"required": ["score"]}}}}],
    "additionalProperties": False,
}


def validate(results: dict) -> None:
    jsonschema.validate(results, RESULTS_SCHEMA,
                        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def test_a_report_converts_to_valid_results() -> None:
    report = {
        "version": 3, "status": "fail", "message": None, "score": 1, "max_score": 3,
        "problems": [{"problem": "decode", "number": 5, "status": "fail", "passed": 1,
                      "total": 3, "submission": "x"}],
        "tests": [
            {"name": "05-decode: ids to text", "check": "ids to text", "problem": "decode",
             "status": "pass",
             "message": None, "output": None, "score": 1, "max_score": 1},
            {"name": "05-decode: unknown id", "check": "unknown id", "problem": "decode",
             "status": "fail",
             "message": "character 2 differs", "output": "debug print", "score": 0,
             "max_score": 1},
            {"name": "05-decode: runs", "check": "runs", "problem": "decode",
             "status": "error",
             "message": "SyntaxError: invalid syntax", "output": None, "score": 0,
             "max_score": 1},
        ],
    }
    results = to_gradescope(report, 2.5)
    validate(results)
    # decode is worth the default 10 points: 1 check of 3 earns 3.33, so 3 whole points,
    # whatever the report's own per-check scores said.
    assert next(p for p in problems() if p.slug == "decode").points == 10
    assert results["score"] == 3 and results["execution_time"] == 2.5
    # One test for the problem, its whole points, its checks in its output in order.
    (test,) = results["tests"]
    assert (test["name"], test["status"], test["score"], test["max_score"]) == (
        "05-decode", "failed", 3, 10)
    assert test["visibility"] == "visible"
    # What the code printed is shown as text: "**PASSED**" or an image link in it is
    # never rendered, whatever Gradescope's default for a test's output.
    assert test["output_format"] == results["test_output_format"] == "text"
    lines = test["output"].splitlines()
    assert lines[0] == "passed: ids to text" and lines[1] == "fail: unknown id"
    assert lines[2].strip() == "character 2 differs"
    assert "debug print" in test["output"] and "error: runs" in test["output"]
    assert "SyntaxError" in test["output"]
    assert results["extra_data"]["max_score"] == 10
    assert "decode" in results["output"]


def test_tests_add_up_to_the_score_with_a_late_penalty() -> None:
    entries = [("crop-context", 1, 4, 4), ("decode", 5, 1, 3), ("softmax", 8, 0, 2)]
    report = {"version": 3, "status": "fail", "mode": "practice",
              "problems": [{"problem": slug, "number": n, "status": "pass" if ok == total
                            else "fail", "passed": ok, "total": total}
                           for slug, n, ok, total in entries],
              "tests": [], "late": {"minutes": 90, "policy": "10%/h", "percent": 20}}
    results = to_gradescope(report, 1.0)
    validate(results)
    # 10 + 3 + 0 = 13 earned; 20% of 13 is 2.6, so 3 points lost, half up: 10.
    assert [t["score"] for t in results["tests"]] == [10, 3, 0, -3]
    assert results["score"] == 10 == sum(t["score"] for t in results["tests"])
    assert sum(t["max_score"] for t in results["tests"]) == results["extra_data"]["max_score"]
    late = results["tests"][-1]
    assert late["name"] == "late penalty" and "90 min late, 10%/h" in late["output"]
    assert "from 13" in late["output"] and "90 min late" in results["output"]


def test_a_grader_failure_still_gives_valid_results() -> None:
    results = to_gradescope({"message": "the grader wrote no report: no sandbox",
                             "tests": [], "problems": []}, 0.1)
    validate(results)
    assert results["score"] == 0 and "no sandbox" in results["output"]


def test_the_schema_rejects_what_gradescope_would() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate({"tests": [{"name": "x", "status": "pass", "score": 1}]})
    with pytest.raises(jsonschema.ValidationError):
        validate({"score": 1, "visibility": "always"})


def test_bundle_builds_and_grades_a_submission(tmp_path: Path) -> None:
    bundle = tmp_path / "autograder.zip"
    built = subprocess.run([sys.executable, "-m", "grader", "gradescope", "--out", str(bundle)],
                           capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert built.returncode == 0, built.stderr[-3000:]
    source = tmp_path / "autograder" / "source"
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        archive.extractall(source)
    assert {"setup.sh", "run_autograder", "self_test"} <= set(names)
    assert [n for n in names if n.startswith("wheels/gpt_kata-") and n.endswith(".whl")]
    for script in ("setup.sh", "run_autograder", "self_test"):
        assert modes[script] & stat.S_IXUSR, f"{script} is not executable"
        assert subprocess.run(["bash", "-n", str(source / script)]).returncode == 0
        (source / script).chmod(0o755)  # extractall drops the mode
    assert 'torch==2.13.0+cpu"' in (source / "setup.sh").read_text()
    # The commit alone, for an installed grader (no checkout) to name in its provenance.
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    if head:
        assert (source / "COMMIT").read_text() == f"{head}\n"

    # Gradescope's layout: a zipped clone arrives as one folder inside submission/.
    root = tmp_path / "autograder"
    clone = root / "submission" / "gpt-kata-main"
    for folder in ("01-crop-context", "05-decode"):
        (clone / "problems" / folder).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / folder / "solution.py", clone / "problems" / folder)
    (clone / "problems" / "06-generate").mkdir()
    (clone / "problems" / "06-generate" / "solution.py").write_text("def generate(:\n")
    # The grader's own SwiGLU, looked for in the worker's memory: none is there.
    (clone / "problems" / "33-swiglu").mkdir()
    (clone / "problems" / "33-swiglu" / "solution.py").write_text(attack_for("swiglu"))
    env = {**os.environ, "GPT_KATA_AUTOGRADER_ROOT": str(root),
           "GPT_KATA_PYTHON": sys.executable, "GPT_KATA_ALLOW_UNISOLATED": "1"}
    ran = subprocess.run([str(source / "run_autograder")], capture_output=True, text=True,
                         timeout=600, env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]

    results = json.loads((root / "results" / "results.json").read_text())
    validate(results)
    # The self-test an instructor runs before publishing: the layers, and a grade.
    checked = subprocess.run(["bash", str(source / "self_test")], capture_output=True,
                             text=True, timeout=600, env=env, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr[-3000:]
    assert "sandbox layers this container gives: " in checked.stdout
    assert "01-crop-context as a submission: 10/10 points" in checked.stdout
    assert "self_test" in (source / "setup.sh").read_text()
    tests = results["tests"]
    passed = {t["name"] for t in tests if t["status"] == "passed"}
    assert passed == {"01-crop-context", "05-decode"}
    # Two problems' full points (10 each by default), whole: the tests add up to them.
    assert results["score"] == 20 == sum(t["score"] for t in tests)
    assert results["output_format"] == "md" and "score 20/" in results["output"]
    # What the learner's code printed or raised is shown as text, never rendered.
    assert results["test_output_format"] == "text"
    assert {t["output_format"] for t in results["tests"]} == {"text"}
    assert results["extra_data"]["provenance"]["files"]["05-decode"]
    # Every problem counts, graded or not, so every learner is scored out of one total:
    # one test each.
    assert [t["name"] for t in tests] == [p.folder for p in problems()]
    generate = next(t for t in tests if t["name"] == "06-generate")
    assert "SyntaxError" in generate["output"]
    swiglu = next(t for t in tests if t["name"] == "33-swiglu")
    assert swiglu["score"] == 0 and "is not in this worker's memory" in swiglu["output"]


def test_the_submission_is_found_in_either_layout(tmp_path: Path) -> None:
    from grader.classroom.gradescope_autograder import submission_root

    clone = tmp_path / "clone" / "gpt-kata-main"
    (clone / "problems" / "05-decode").mkdir(parents=True)
    (clone / "problems" / "05-decode" / "solution.py").write_text("")
    assert submission_root(tmp_path / "clone") == clone
    flat = tmp_path / "flat"
    (flat / "05-decode").mkdir(parents=True)
    (flat / "05-decode" / "solution.py").write_text("")
    assert submission_root(flat) == flat
    # A lone link is not followed: it could lead to the grader's reference solutions.
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "x").symlink_to(ROOT / "solutions", target_is_directory=True)
    assert submission_root(linked) == linked


def clone_at_head(target: Path, mtime: float | None = None) -> Path:
    subprocess.run(["git", "clone", "-q", "--local", "--no-hardlinks", str(ROOT), str(target)],
                   check=True, capture_output=True)
    if mtime is not None:  # files made at another time must not change the bundle
        for path in target.rglob("*"):
            os.utime(path, (mtime, mtime), follow_symlinks=False)
    return target


def test_the_bundle_is_the_same_byte_for_byte_from_one_commit(tmp_path: Path) -> None:
    import hashlib
    import io

    from grader.classroom.gradescope_bundle import build_bundle

    first = clone_at_head(tmp_path / "first")
    second = clone_at_head(tmp_path / "second", mtime=1_000_000_000.0)
    digests = []
    for n, root in enumerate((first, second)):
        out = tmp_path / f"bundle-{n}.zip"
        build_bundle(root, out, allow_unisolated=False)
        digests.append(hashlib.sha256(out.read_bytes()).hexdigest())
    assert digests[0] == digests[1]

    committed = int(subprocess.run(["git", "-C", str(first), "log", "-1", "--format=%ct"],
                                   capture_output=True, text=True, check=True).stdout)
    stamp = tuple(time.gmtime(committed)[:6])
    with zipfile.ZipFile(tmp_path / "bundle-0.zip") as bundle:
        names = bundle.namelist()
        assert names == sorted(names)
        (wheel_name,) = [n for n in names if n.startswith("wheels/")]
        inner = zipfile.ZipFile(io.BytesIO(bundle.read(wheel_name)))
        for archive in (bundle, inner):
            for info in archive.infolist():
                # Dated by the commit (to the zip format's two seconds), fixed modes.
                assert info.date_time == stamp[:5] + (stamp[5] - stamp[5] % 2,), info.filename
                assert info.external_attr >> 16 in (0o100644, 0o100755), info.filename
                assert "__pycache__" not in info.filename and not info.filename.endswith(".pyc")
        assert "RECORD" in inner.namelist()[-1]
        lines = bundle.read("requirements.txt").decode().splitlines()
        setup = bundle.read("setup.sh").decode()
    # Every package the bundle installs is pinned with ==.
    assert lines and all(re.fullmatch(r"[a-z0-9-]+==[0-9][\w.]*", line) for line in lines)
    installs = [line for line in setup.splitlines() if '"${pip[@]}"' in line]
    assert installs and "--no-deps" in setup and "pip check" in setup
    for line in installs:
        named = re.findall(r'"([\w-]+==[^"]+)"', line)
        assert named or "-r " in line or ".whl" in line, line
    assert '"pip==' in setup and 'torch==2.13.0+cpu"' in setup


METADATA = {"id": 1, "created_at": "2026-12-02T01:30:00.123456+01:00",
            "assignment": {"due_date": "2026-12-01T23:00:00.000000+00:00",
                           "late_due_date": "2026-12-03T23:00:00.000000+00:00"},
            "users": [{"email": "ada@example.org", "id": 7, "name": "Ada"}]}


def test_a_submissions_lateness_is_read_from_gradescopes_metadata() -> None:
    from grader.classroom.gradescope_autograder import minutes_late

    # 00:30 UTC against 23:00 UTC: 90 minutes and a fraction, so 91 begun.
    assert minutes_late(METADATA) == 91
    on_time = {**METADATA, "created_at": "2026-12-01T22:59:59Z"}
    assert minutes_late(on_time) == 0
    # An extension Gradescope records for the submitter moves their own due date.
    extended = {**METADATA, "users": [{"id": 7, "assignment": {
        "due_date": "2026-12-02T02:00:00+00:00"}}]}
    assert minutes_late(extended) == 0
    for broken in ({}, {**METADATA, "created_at": "yesterday"},
                   {**METADATA, "assignment": {"due_date": "2026-12-01T23:00:00"}}):
        with pytest.raises(ValueError):
            minutes_late(broken)


def test_a_bundles_late_penalty_is_applied_by_the_submission_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from grader.classroom import gradescope_autograder as gradescope
    from grader.classroom.gradescope_bundle import run_script
    from grader.reports.late import parse_penalty

    script = run_script(False, late=parse_penalty("10%/h", most=50))
    assert "export GPT_KATA_LATE_PENALTY=10%/h" in script
    assert "export GPT_KATA_LATE_PENALTY_MAX=50" in script
    assert "GPT_KATA_LATE_PENALTY" not in run_script(False)
    assert run_script(False, self_test=True).rstrip().endswith("--self-test")

    report = {"problems": [{"problem": "decode", "number": 5, "status": "pass", "passed": 2,
                            "total": 2}], "tests": []}
    monkeypatch.setattr(gradescope, "grade", lambda submission, work: copy.deepcopy(report))
    (tmp_path / "submission").mkdir()
    (tmp_path / "submission_metadata.json").write_text(json.dumps(METADATA))
    monkeypatch.setenv("GPT_KATA_LATE_PENALTY", "10%/h")
    monkeypatch.setenv("GPT_KATA_LATE_PENALTY_MAX", "50")
    assert gradescope.run(tmp_path) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    validate(results)
    # The log is the page's output, its score said once (it was said again after it).
    assert capsys.readouterr().out.count("score 8/10") == 1
    # 91 minutes late: two hours begun, 20% of 10 points.
    assert results["score"] == 8 == sum(t["score"] for t in results["tests"])
    assert results["tests"][-1]["name"] == "late penalty"
    # Without the metadata, no penalty is guessed, and the page says so.
    (tmp_path / "submission_metadata.json").unlink()
    gradescope.run(tmp_path)
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results["score"] == 10 and "no late penalty was applied" in results["output"]
    assert "no submission_metadata.json beside the submission" in results["output"]
    assert "Errno" not in results["output"]
    # A bundle without a penalty takes none, however late.
    monkeypatch.delenv("GPT_KATA_LATE_PENALTY")
    (tmp_path / "submission_metadata.json").write_text(json.dumps(METADATA))
    gradescope.run(tmp_path)
    assert json.loads((tmp_path / "results" / "results.json").read_text())["score"] == 10


def test_the_self_test_says_when_every_submission_would_score_nothing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from grader.classroom import gradescope_check
    from grader.sandbox.worker import machine

    monkeypatch.setattr(machine, "probe", lambda: machine.Isolation(platform="linux"))
    refused = {"message": "the grader could not run: classroom mode needs Linux with Landlock",
               "tests": []}
    assert gradescope_check.self_test(lambda submission, work: refused, allowed=False) == 1
    said = capsys.readouterr().out
    assert "sandbox layers this container gives: none" in said
    assert "REFUSED" in said and "--allow-unisolated" in said and "FAILED" in said


def test_the_self_test_says_the_bundles_late_penalty_and_seed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """What every grade is made under, as run_autograder sets it: the penalty, and the
    instructor's seed (its value is never shown: the build log may be read by others)."""
    from grader.classroom import gradescope_autograder
    from grader.grading.subject.examples_seed import SEED_VARIABLE

    monkeypatch.delenv("GPT_KATA_LATE_PENALTY", raising=False)
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert gradescope_autograder.bundle_settings() == (
        "late penalty: none; drawn examples: from the grader's own seed (the bundle "
        "carries none)")
    monkeypatch.setenv("GPT_KATA_LATE_PENALTY", "10%/day")
    monkeypatch.setenv("GPT_KATA_LATE_PENALTY_MAX", "50")
    monkeypatch.setenv(SEED_VARIABLE, "a secret of the class")
    said = gradescope_autograder.bundle_settings()
    assert said == ("late penalty: 10%/day, at most 50%; drawn examples: from the seed the "
                    "bundle was built with"), said
    # And the bundle's self_test says it, as setup.sh runs it.
    monkeypatch.setattr(sys, "argv", ["gradescope_autograder", "--self-test"])
    monkeypatch.setattr(gradescope_autograder, "grade", lambda submission, work: {})
    gradescope_autograder.main()
    assert said in capsys.readouterr().out


def test_a_hand_in_of_nothing_says_so_in_the_learners_words(tmp_path: Path) -> None:
    """A Gradescope submission with no solution.py: the run says none was handed in (not
    the empty file's "no class Solution" graded in their place), and the checks say
    where they looked as the learner knows it, not by the run's private folder."""
    from grader.classroom.gradescope_autograder import grade, to_gradescope

    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "README.txt").write_text("hi")
    # A solution.py uploaded alone, as a learner often does, names no problem.
    (submission / "solution.py").write_text("class Solution: ...\n")
    work = tmp_path / "work"
    work.mkdir()
    report = grade(submission, work)
    assert report["message"].startswith("no solution.py of the "), report["message"]
    messages = [t["message"] for t in report["tests"]]
    assert messages and all("in your submission, its problems/" in m for m in messages)
    assert not any(str(work) in m for m in [*messages, *report["notes"]])
    # The page's output says why, below the run's message, in the learner's words.
    output = to_gradescope(report, 1.0)["output"]
    assert "solution.py is outside any problem's folder, so it answers no problem" in output
    assert "in your submission, its problems/" in output and str(work) not in output
