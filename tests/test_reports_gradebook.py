"""The gradebook survives any one learner: hostile names, a full disk for one of
them, a table that cannot be written. Grading itself is replaced by a canned
report here (grading a learner is tested in test_gradebook.py and below, once,
for real), so every class of name can be tried."""

from __future__ import annotations

import builtins
import csv
import errno
import io
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import ROOT
from gradebooks import finished_gradebook

from grader.classroom.gradebook import command, grading
from grader.classroom.gradebook.outputs import report_stem, shared_report_files
from grader.classroom.gradebook.roster import Learner
from grader.classroom.summary import markdown_table
from grader.cli.main import main

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                 "\ud800-\udfff]")
FORMULA = ("=", "+", "-", "@", "\t", "\r")

# Folder names and the learner label each must get (written out by hand: the
# name's own characters, with what cannot be shown escaped and nothing lost).
NAMES: dict[bytes, str] = {
    b"=2+3": "=2+3",
    b'=HYPERLINK("evil.example";"grade")': '=HYPERLINK("evil.example";"grade")',
    b"@SUM(A1:A9)": "@SUM(A1:A9)",
    b"+1": "+1",
    b"-1": "-1",
    b"\tx": "\\tx",
    b"ada": "ada",
    b"bad\xff\xfe": "bad\\xff\\xfe",
    b"bad\\xff\\xfe": "bad\\\\xff\\\\xfe",
    b"close ```| fence\nand <b>html<b>": "close ```| fence\\nand <b>html<b>",
    b"green \x1b[32m\xe2\x9c\x93 pass\x1b[0m\r": "green \\x1b[32m✓ pass\\x1b[0m\\r",
    b"rtl \xe2\x80\xaeevil": "rtl \\u202eevil",
    b"[red]markup[bold]": "[red]markup[bold]",
}


def canned(learner: Learner, chosen, args, servers=None) -> dict:
    """What `grade --json` writes for a learner who passes every problem."""
    return {"version": 3, "status": "pass", "message": None, "score": len(chosen),
            "max_score": len(chosen), "mode": "classroom",
            "isolation": ["user-namespace", "landlock"],
            "problems": [{"problem": p.slug, "number": p.number, "status": "pass", "passed": 1,
                          "total": 1, "submission": "x"} for p in chosen],
            "tests": [{"name": f"{p.folder}: a check", "problem": p.slug, "task_id": p.number,
                       "status": "pass", "message": None, "output": None, "score": 1,
                       "max_score": 1} for p in chosen]}


@pytest.fixture
def graded(monkeypatch):
    monkeypatch.setattr(grading, "grade_learner", canned)
    monkeypatch.setattr(command, "forking", lambda: False)

    def run(roster: Path, out: Path, *extra: str) -> int:
        return main(["gradebook", str(roster), "decode", "--out", str(out), "--jobs", "1",
                     "--junit", "--allow-unisolated", *extra])

    return run


def make_roster(root: Path, names=NAMES) -> Path:
    roster = root / "roster"
    os.makedirs(os.fsencode(roster))
    for raw in names:
        folder = os.path.join(os.fsencode(roster), raw, b"05-decode")
        os.makedirs(folder)
        with open(os.path.join(folder, b"solution.py"), "wb") as handle:
            handle.write((ROOT / "solutions" / "05-decode" / "solution.py").read_bytes())
    return roster


def table(out: Path) -> list[list[str]]:
    # strict UTF-8: a name that is not UTF-8 must not have made the file unreadable
    with (out / "gradebook.csv").open(newline="", encoding="utf-8", errors="strict") as handle:
        return list(csv.reader(handle))


def assert_all_safe(out: Path, *texts: str) -> None:
    """Every file in `out` is UTF-8 with no raw control character; JSON and JUnit parse."""
    for path in out.iterdir():
        text = path.read_bytes().decode("utf-8")
        assert not RAW.search(text.replace("\r\n", "").replace("\n", "")), path
        if path.suffix == ".json":
            json.loads(text)
        elif path.suffix == ".xml":
            ET.fromstring(path.read_bytes())
    for text in texts:
        assert not RAW.search(text.replace("\n", "")), text


def test_every_hostile_name_gets_its_row_safely(tmp_path, graded, capsys):
    roster, out = make_roster(tmp_path), tmp_path / "out"
    assert graded(roster, out) == 0
    shown = capsys.readouterr()
    lines = table(out)
    assert lines[0][0] == "learner" and len(lines) == 1 + len(NAMES)
    learners = [line[0] for line in lines[1:]]
    for cell in learners:
        assert not cell.startswith(FORMULA), cell
    # each name, neutralised where a spreadsheet would run it, and nothing lost
    expected = {("'" + label if label.startswith(FORMULA) else label)
                for label in NAMES.values()}
    assert set(learners) == expected
    assert {line[5] for line in lines[1:]} == {"pass"}
    # one report per learner, each found again under its name
    reports = sorted(out.glob("[!.]*.json"))
    assert len(reports) == len(NAMES)
    assert len(list(out.glob("*.junit.xml"))) == len(NAMES)
    assert_all_safe(out, shown.out, shown.err)
    assert "Traceback" not in shown.err
    # a second run finds every report again and regrades nobody
    assert graded(roster, out) == 0
    assert "unchanged, not regraded" in capsys.readouterr().out
    assert table(out) == lines


def test_the_summary_of_hostile_names_stays_one_table(tmp_path, graded):
    roster, out = make_roster(tmp_path), tmp_path / "out"
    assert graded(roster, out) == 0
    summary = markdown_table(table(out))
    assert "```" not in summary and "<b>" not in summary and not RAW.search(summary)
    rows = [line for line in summary.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + len(NAMES)
    columns = len(table(out)[0])
    for line in rows:
        assert len(re.findall(r"(?<!\\)\|", line)) == columns + 1, line


def every_open(monkeypatch, fake) -> None:
    """Make every way of opening a file go through fake: open(), io.open and Path.open
    (on Python 3.10, Path.open calls the io.open pathlib bound when it was imported, so
    patching io.open alone never reaches the gradebook's writes)."""
    monkeypatch.setattr(io, "open", fake)
    monkeypatch.setattr(builtins, "open", fake)
    monkeypatch.setattr(Path, "open", fake)


def test_a_full_disk_for_one_learner_is_their_row(tmp_path, graded, monkeypatch, capsys):
    roster = make_roster(tmp_path, {b"ada": "", b"ben": "", b"cy": ""})
    out = tmp_path / "out"
    real_open = io.open

    def full_for_ben(file, mode="r", *args, **kwargs):
        # A file descriptor (subprocess's pipes, say) is no file of ben's.
        named = not isinstance(file, int)
        if named and "ben" in os.fsdecode(os.fspath(file)) and any(m in mode for m in "wax"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        return real_open(file, mode, *args, **kwargs)

    # The full disk only for this run: the next grades ben with the canned report too
    # (undoing the test's whole monkeypatch would grade him for real).
    with pytest.MonkeyPatch.context() as full:
        every_open(full, full_for_ben)
        code = graded(roster, out)
    shown = capsys.readouterr()
    assert code == 1  # someone could not be graded
    lines = {line[0]: line for line in table(out)[1:]}
    assert set(lines) == {"ada", "ben", "cy"}
    assert lines["ben"][5] == "error" and lines["ada"][5] == lines["cy"][5] == "pass"
    # ben's row says why, in the table's last column as in the table shown.
    assert lines["ben"][6].startswith("not graded: their report could not be written")
    # ben is scored out of decode's full points; ada's canned report says 1 of 1.
    assert lines["ben"][1:5] == ["0", "1", "0", "10"] and lines["ada"][1:5] == ["1", "1", "1", "1"]
    assert "No space left on device" in shown.out
    assert "Traceback" not in shown.err
    assert {p.name for p in out.glob("[!.]*.json")} == {"ada.json", "cy.json"}
    assert_all_safe(out, shown.out)
    # with room on the disk again, ben is graded next time, and the others are not
    assert graded(roster, out) == 0
    assert {line[0]: line[5:] for line in table(out)[1:]}["ben"] == ["pass", ""]
    assert json.loads((out / "ben.json").read_text())["status"] == "pass"
    said = capsys.readouterr().out
    assert said.count("unchanged, not regraded") == 2
    # The table's caption counts them, so a rerun of a large class says it at a glance.
    assert "3 learners, 1 problem: 1 graded, 2 unchanged since the last run" in " ".join(
        said.split())


def test_a_table_that_cannot_be_written_keeps_the_last_one(tmp_path, graded, monkeypatch,
                                                          capsys):
    roster, out = make_roster(tmp_path, {b"ada": "", b"ben": ""}), tmp_path / "out"
    assert graded(roster, out) == 0
    before = (out / "gradebook.csv").read_bytes()
    real_open = io.open
    written = []

    def torn(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        if "gradebook.csv" in os.fsdecode(os.fspath(file)) and "w" in mode:
            written.append(file)
            handle.write("learner,problems_pa")  # half a table, then the disk is full
            handle.close()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        return handle

    every_open(monkeypatch, torn)
    code = graded(roster, out, "--force")
    monkeypatch.undo()
    shown = capsys.readouterr()
    assert written and code == 1
    assert (out / "gradebook.csv").read_bytes() == before
    assert "could not be written" in shown.err and "Traceback" not in shown.err
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def test_shards_of_hostile_names_merge_into_one_table(tmp_path, graded):
    roster = make_roster(tmp_path)
    for k in (1, 2):
        assert graded(roster, tmp_path / f"shard-{k}", "--shard", f"{k}/2") == 0
    merged = tmp_path / "merged"
    assert main(["gradebook", "--merge", str(tmp_path / "shard-1"), str(tmp_path / "shard-2"),
                 "--out", str(merged), "-q"]) == 0
    whole = tmp_path / "whole"
    assert graded(roster, whole) == 0
    assert table(merged) == table(whole)
    assert sorted(p.name for p in merged.glob("[!.]*.json")) == sorted(
        p.name for p in whole.glob("[!.]*.json"))
    assert_all_safe(merged)


def test_a_hostile_class_graded_for_real(tmp_path):
    """Real grades: a formula for a name, a folder that is not UTF-8 whose code prints
    and raises escape sequences, a name that would close the summary's fence, and a
    learner whose report cannot be written (a folder stands where it goes)."""
    import subprocess
    import sys

    from test_reports_console import EVIL

    reference = (ROOT / "solutions" / "05-decode" / "solution.py").read_bytes()
    starter = (ROOT / "data" / "starters" / "05-decode" / "solution.py").read_bytes()
    learners = {b"=2+3": reference, b"caf\xff": EVIL.encode(), b"ben": reference,
                b"zed ```|<b>": starter}
    roster = make_roster(tmp_path, dict.fromkeys(learners, ""))
    for raw, source in learners.items():
        with open(os.path.join(os.fsencode(roster), raw, b"05-decode", b"solution.py"),
                  "wb") as handle:
            handle.write(source)
    out = tmp_path / "out"
    (out / "ben.json").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", str(roster), "decode", "--out", str(out),
         "--jobs", "2", "--junit", "--allow-unisolated"],
        capture_output=True, cwd=ROOT, timeout=600)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err[-3000:]  # ben could not be recorded
    assert "Traceback" not in err
    lines = {line[0]: line for line in table(out)[1:]}
    assert set(lines) == {"'=2+3", "caf\\xff", "ben", "zed ```|<b>"}
    assert lines["'=2+3"][5] == "pass" and lines["ben"][5] == "error"
    assert lines["caf\\xff"][5] == "fail" and lines["zed ```|<b>"][5] == "fail"
    evil = json.loads((out / "caf%5Cxff.json").read_text(encoding="utf-8"))
    assert all(t["status"] == "fail" for t in evil["tests"])
    assert any("\\x1b[2K\\r" in (t["output"] or "") for t in evil["tests"])
    assert all("\n\u2713" not in t["message"] for t in evil["tests"])
    ET.parse(out / "caf%5Cxff.junit.xml")
    for path in out.iterdir():
        if path.is_file():
            text = path.read_bytes().decode("utf-8")
            assert not RAW.search(text.replace("\r\n", "").replace("\n", "")), path
    assert not RAW.search(done.stdout.decode("utf-8").replace("\n", ""))
    shown = " ".join(re.sub("[─-╿]", " ", done.stdout.decode("utf-8")).split())
    assert "not graded: their report could not be written" in shown
    assert lines["ben"][1:5] == ["0", "1", "0", "10"]  # out of the class's total


def test_merge_quotes_a_formula_that_a_shard_left_bare(tmp_path):
    shard = finished_gradebook(
        tmp_path / "shard", "learner,problems_passed,problems_total,score,max_score,decode\r\n"
        "=2+3,1,1,5,5,pass\r\n'@SUM(A1),1,1,5,5,pass\r\nada,0,1,0,5,fail\r\n")
    merged = tmp_path / "merged"
    assert main(["gradebook", "--merge", str(shard), "--out", str(merged), "-q"]) == 0
    assert [line[0] for line in table(merged)[1:]] == ["'=2+3", "'@SUM(A1)", "ada"]


def test_report_files_of_any_name_can_be_made_and_never_meet(tmp_path):
    # The last: a short name spelled as the long one before it is shortened.
    names = ["ada", "a:b", "a%3Ab", "q?*|<>\"", "\\\\x41", "é" * 250, "é" * 251, "a" * 200]
    names.append(report_stem("a" * 200))
    stems = [report_stem(name) for name in names]
    assert len(set(stems)) == len(names)
    assert shared_report_files(names) == []
    for stem in stems:
        assert not re.search(r'[\\/:<>|*?"]', stem) and len(stem.encode()) <= 200
        (tmp_path / f"{stem}.junit.xml").write_text("made")


def test_report_files_are_never_named_as_windows_devices_or_end_in_a_dot() -> None:
    # On Windows `con.json` is the console and `ada.` is made as `ada`.
    devices = {"CON", "PRN", "AUX", "NUL", "COM1", "LPT9", "CONIN$", "COM\u00b2"}
    names = ["con", "Con", "nul.txt", "aux .x", "com1", "LPT9", "conin$", "com\u00b2",
             "ada.", "ada ", "ada", "%63on", "console", "a.con"]
    stems = [report_stem(name) for name in names]
    assert len(set(stems)) == len(names)
    assert stems[-2:] == ["console", "a.con"]
    for stem in stems:
        assert stem.partition(".")[0].rstrip(" ").upper() not in devices, stem
        assert not stem.endswith((".", " ")), stem


def test_names_one_file_apart_where_case_or_accents_are_not_told_apart_are_refused(
        tmp_path, capsys):
    assert shared_report_files(["Ada", "ada", "bo", "Zo\u00eb", "Zoe\u0308"]) == [
        ["Ada", "ada"], ["Zo\u00eb", "Zoe\u0308"]]
    roster = tmp_path / "roster"
    for name in ("Ada", "ada"):
        (roster / name).mkdir(parents=True)
    assert main(["gradebook", str(roster), "decode", "--out", str(tmp_path / "out"), "-q"]) == 2
    assert "Ada and ada: their reports would be one file" in capsys.readouterr().err
