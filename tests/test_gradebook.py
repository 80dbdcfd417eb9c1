"""`gpt-kata gradebook`: a synthetic class graded on two cheap problems.

The roster has a clone whose grader/ was edited to cheat (it must never run),
and folders laid out like problems/: one partial with a problem folder missing,
one with the untouched starter and a syntax error, one with nothing but a link
to a reference.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT

from grader.reports.junit import junit_tree
from grader.sandbox.worker.machine import probe

STARTERS = ROOT / "data" / "starters"
SOLUTIONS = ROOT / "solutions"
CROP, DECODE = "01-crop-context", "05-decode"



def gradebook(roster: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", str(roster), "crop-context", "decode",
         "--out", str(out), "--jobs", "2", "--junit", "--allow-unisolated", *extra],
        capture_output=True, text=True, timeout=300, cwd=ROOT)


def put(root: Path, folder: str, source: Path | str) -> None:
    (root / folder).mkdir(parents=True, exist_ok=True)
    target = root / folder / "solution.py"
    if isinstance(source, Path):
        shutil.copy(source, target)
    else:
        target.write_text(source)


def test_gradebook_of_a_class(tmp_path: Path) -> None:
    # One test, so that parallel test workers do not each grade the class again.
    graded = grade_a_class(tmp_path)
    check_cells(graded)
    check_learner_reports(graded)
    assert not graded["marker"].exists(), "a clone's grader/ ran"
    check_junit(graded)
    check_reruns(graded)


def grade_a_class(base: Path) -> dict:
    roster, out, marker = base / "roster", base / "out", base / "cheated"
    # ada: a clone of the kata, both problems solved, and a grader/ that would cheat
    # (and leave a mark) if anything imported it.
    ada = roster / "ada"
    shutil.copytree(STARTERS, ada / "problems")
    for folder in (CROP, DECODE):
        put(ada / "problems", folder, SOLUTIONS / folder / "solution.py")
    (ada / "problems" / "registry.toml").write_text("[[problem]]\nslug = 'decode'\n")
    cheat = f"open({str(marker)!r}, 'w').write('ran')\n"
    for name in ("__init__.py", "__main__.py"):
        (ada / "grader").mkdir(exist_ok=True)
        (ada / "grader" / name).write_text(cheat)
    # ben: laid out like problems/, decode solved, no folder for crop-context.
    put(roster / "ben", DECODE, SOLUTIONS / DECODE / "solution.py")
    # cy: the untouched starter, and a syntax error.
    put(roster / "cy", CROP, STARTERS / CROP / "solution.py")
    put(roster / "cy", DECODE, "def decode(:\n")
    # eve: nothing but a link to the reference, which does not count.
    (roster / "eve" / DECODE).mkdir(parents=True)
    (roster / "eve" / DECODE / "solution.py").symlink_to(SOLUTIONS / DECODE / "solution.py")

    first = gradebook(roster, out)
    assert first.returncode == 0, first.stderr[-3000:]
    stamps = reports(out)
    return {"roster": roster, "out": out, "marker": marker, "stamps": stamps}


def reports(out: Path) -> dict[str, int]:
    """Each learner's report, and when it was written."""
    return {p.name: p.stat().st_mtime_ns for p in out.glob("[!.]*.json")}


def rows(out: Path) -> list[dict[str, str]]:
    with (out / "gradebook.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def check_cells(graded: dict) -> None:
    table = rows(graded["out"])
    assert [r["learner"] for r in table] == ["ada", "ben", "cy", "eve"]
    assert list(table[0]) == ["learner", "problems_passed", "problems_total", "score",
                              "max_score", "crop-context", "decode", "note"]
    cells = {r["learner"]: (r["problems_passed"], r["crop-context"], r["decode"]) for r in table}
    assert cells == {"ada": ("2", "pass", "pass"), "ben": ("1", "missing", "pass"),
                     "cy": ("0", "fail", "fail"), "eve": ("0", "missing", "missing")}
    assert {r["problems_total"] for r in table} == {"2"}
    # Everyone is scored out of every check of both problems, missing ones included.
    full = int(table[0]["max_score"])
    assert table[0]["score"] == str(full) and {r["max_score"] for r in table} == {str(full)}
    assert [int(r["score"]) for r in table[2:]] == [0, 0]
    assert 0 < int(table[1]["score"]) < full


def check_learner_reports(graded: dict) -> None:
    out, roster = graded["out"], graded["roster"]
    ada = json.loads((out / "ada.json").read_text())
    assert ada["mode"] == "classroom" and ada["status"] == "pass"
    assert {p["submission"] for p in ada["problems"]} == {
        str(roster / "ada" / "problems" / f / "solution.py") for f in (CROP, DECODE)}
    cy = json.loads((out / "cy.json").read_text())
    messages = {t["problem"]: t["message"] for t in cy["tests"]}
    assert "not implemented yet" in messages["crop-context"]
    assert "SyntaxError" in messages["decode"]
    eve = json.loads((out / "eve.json").read_text())
    assert [p["status"] for p in eve["problems"]] == ["missing", "missing"]
    messages = {t["problem"]: t["message"] for t in eve["tests"]}
    assert "no such file" in messages["crop-context"]
    assert "link out of the learner's folder" in messages["decode"]
    # Two problems of 10 points each, whether graded or missing.
    assert eve["max_score"] == ada["max_score"] == 20 and len(eve["tests"]) == len(ada["tests"])
    if probe().namespaces:
        # Each learner's workers come from a fork server spawned for their grade,
        # in namespaces of its own, where a worker can still make its PID namespace.
        assert "worker-pid-namespace" in ada["isolation"], ada["isolation"]


def check_junit(graded: dict) -> None:
    out = graded["out"]
    for learner in ("ada", "cy"):
        report = json.loads((out / f"{learner}.json").read_text())
        root = ET.parse(out / f"{learner}.junit.xml").getroot()
        cases = list(root.iter("testcase"))
        assert len(cases) == len(report["tests"])
        assert {c.get("classname") for c in cases} == {CROP, DECODE}
        # A check that could not run is an <error>, one that ran and failed a <failure>.
        failures = [f for c in cases for f in c if f.tag in ("failure", "error")]
        assert len(failures) == sum(t["status"] != "pass" for t in report["tests"])
        assert all(f.get("message") for f in failures)
        assert all(f.tag == ("error" if f.get("type") == "error" else "failure")
                   for f in failures)


def check_reruns(graded: dict) -> None:
    roster, out, stamps = graded["roster"], graded["out"], graded["stamps"]
    before = rows(out)
    (roster / "eve" / DECODE / "solution.py").unlink()
    put(roster / "eve", DECODE, SOLUTIONS / DECODE / "solution.py")
    again = gradebook(roster, out)
    assert again.returncode == 0, again.stderr[-3000:]
    now = reports(out)
    changed = {name for name in stamps if now[name] != stamps[name]}
    assert changed == {"eve.json"}
    after = {r["learner"]: r for r in rows(out)}
    assert after["eve"]["decode"] == "pass"
    assert [after[r["learner"]] for r in before if r["learner"] != "eve"] == before[:-1]

    # --force regrades unchanged files too; a roster of one keeps it quick.
    alone = roster.parent / "alone"
    shutil.copytree(roster / "ben", alone / "ben")
    forced = gradebook(alone, out, "--force")
    assert forced.returncode == 0, forced.stderr[-3000:]
    assert (out / "ben.json").stat().st_mtime_ns != stamps["ben.json"]
    assert [r["learner"] for r in rows(out)] == ["ben"]


def test_junit_holds_any_output() -> None:
    report = {"problems": [{"problem": "decode", "number": 5}], "message": None, "tests": [
        {"name": "05-decode: a check", "check": "a check", "problem": "decode", "task_id": 5,
         "status": "fail", "message": "wrong \x00\x1b[31m", "output": "printed \x07"},
        {"name": "05-decode: another", "check": "another", "problem": "decode", "task_id": 5,
         "status": "pass", "message": None, "output": None}]}
    text = ET.tostring(junit_tree(report).getroot(), encoding="unicode")
    root = ET.fromstring(text)
    assert root.get("tests") == "2" and root.get("failures") == "1"
    (failure,) = root.iter("failure")
    assert failure.get("message").startswith("wrong ")
    assert [c.get("name") for c in root.iter("testcase")] == ["a check", "another"]


def test_a_grade_whose_shared_fork_server_died_is_not_counted(tmp_path: Path) -> None:
    """A learner graded while the class's fork server dies (out of memory, say) is
    reported as not graded, to be graded again, not as failing; later learners
    start servers of their own."""
    import argparse
    import secrets
    import threading

    from grader.classroom.gradebook.grading import run_grader, spawn_server, start_servers

    servers = start_servers(argparse.Namespace(memory=1024))
    assert servers is not None and servers.process is not None
    problems = tmp_path / "problems"
    # The call renames its process (what `ps` shows, readable in /proc from outside
    # every namespace and tmpfs of the sandbox), then hangs.
    mark = f"kata{secrets.token_hex(5)}"
    put(problems, CROP, "import ctypes\n"
                        "class Solution:\n    def crop_context(self, context, n):\n"
                        f"        ctypes.CDLL(None).prctl(15, b'{mark}', 0, 0, 0)\n"
                        "        while True:\n            pass\n")
    argv = ["--submission", str(problems), "--json", str(tmp_path / "report.json"), "-q",
            "--timeout", "60", "--allow-unisolated", "crop-context"]
    killed, graded = threading.Event(), threading.Event()

    def call_started() -> bool:
        for comm in Path("/proc").glob("[0-9]*/comm"):
            try:
                if comm.read_text().strip() == mark:
                    return True
            except OSError:
                pass  # a process that ended meanwhile
        return False

    def kill_once_the_call_runs() -> None:
        # the server dies while the learner's call runs, however slow the machine
        while not graded.wait(0.05):
            if call_started():
                servers.process.kill()
                killed.set()
                return

    killer = threading.Thread(target=kill_once_the_call_runs)
    killer.start()
    try:
        code, _stderr, trouble = run_grader(argv, 300, tmp_path / "stderr.txt", servers)
    finally:
        graded.set()
        killer.join()
        servers.close()
    assert killed.is_set(), "the learner's call never started"
    assert trouble == "the sandbox's fork server stopped during this grade; grade again"
    assert code is not None  # the grade itself ended, on its own
    assert spawn_server(servers) is None


def test_a_report_written_again_without_junit_leaves_no_junit_of_the_earlier_grade(
        tmp_path: Path) -> None:
    # A JUnit report left from a run with --junit said the learner's earlier grade, and
    # a later run with --junit kept it beside the new JSON report, as unchanged.
    from grader.classroom.gradebook.outputs import failed_report, record_learner
    from grader.registry import problems

    chosen = problems()[:1]
    record_learner(tmp_path, "ada", failed_report("the first grade", chosen), chosen, True)
    assert "the first grade" in (tmp_path / "ada.junit.xml").read_text()
    record_learner(tmp_path, "ada", failed_report("the second grade", chosen), chosen, False)
    assert "the second grade" in (tmp_path / "ada.json").read_text()
    assert not (tmp_path / "ada.junit.xml").exists()


def test_an_interrupted_gradebook_lets_each_grade_remove_its_staging_folder(
        tmp_path: Path, monkeypatch) -> None:
    # Ctrl-C ended the graders, and the command then exited without waiting for the
    # threads that had started them: each learner's staging folder, a copy of their
    # solutions in the temporary folder, was left there.
    import argparse
    import io
    import threading
    import time

    from rich.console import Console

    from grader.classroom.gradebook import grading

    started, stopped = threading.Event(), threading.Event()
    removed: list[str] = []

    def grade_learner(learner, chosen, args, servers) -> dict:
        started.set()
        stopped.wait()
        time.sleep(0.3)  # the grade's own ending, then its folder removed
        removed.append(learner)
        return {}

    def interrupted(futures):
        started.wait()
        raise KeyboardInterrupt

    monkeypatch.setattr(grading, "grade_learner", grade_learner)
    monkeypatch.setattr(grading, "as_completed", interrupted)
    monkeypatch.setattr(grading, "stop_all", stopped.set)
    with pytest.raises(KeyboardInterrupt):
        grading.grade_all({"ada": ("ada", "key")}, [], argparse.Namespace(jobs=1), None,
                          tmp_path, {}, {}, Console(file=io.StringIO()))
    assert removed == ["ada"]
