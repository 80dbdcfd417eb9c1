"""Every shape a learner hands in gets its row: a zip (GitHub's "Download ZIP", a
Finder zip with __MACOSX/), a folder holding only a zip, a src/ around the kata;
a crafted zip reaches nothing outside its own private folder; and when nothing is
found, the reason says what was looked for and what is near."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from grader.classroom.gradebook import layouts
from grader.classroom.gradebook.roster import (
    collect,
    hidden_hand_ins,
    not_hand_ins,
    roster_folders,
)
from grader.paths import MAX_SOLUTION_BYTES
from grader.registry import find

CROP, DECODE = "01-crop-context", "05-decode"
SOURCE = b"class Solution:\n    pass\n"


def chosen() -> list:
    return [find("crop-context"), find("decode")]


def make_zip(path: Path, files: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


def test_githubs_download_zip_is_graded(tmp_path: Path) -> None:
    hand_in = make_zip(tmp_path / "ada.zip", {
        "gpt-kata-main/README.md": b"# kata",
        "gpt-kata-main/grader/__init__.py": b"raise SystemExit('never run')",
        f"gpt-kata-main/problems/{CROP}/solution.py": SOURCE,
        f"gpt-kata-main/problems/{DECODE}/statement.md": b"decode"})
    learner = collect("ada", hand_in, chosen())
    assert learner.files == {CROP: SOURCE, DECODE: None}
    assert learner.reasons[DECODE] == "no such file"
    assert str(learner.folder) == f"{hand_in}/gpt-kata-main/problems"
    assert learner.notes == ["found the problems in gpt-kata-main/problems/"]


def test_a_finder_zip_and_its_macosx_folder(tmp_path: Path) -> None:
    hand_in = make_zip(tmp_path / "bo.zip", {
        f"__MACOSX/kata/{CROP}/._solution.py": b"\x00\x05\x16\x07",
        f"kata/{CROP}/solution.py": SOURCE,
        f"kata/{DECODE}/solution.py": SOURCE,
        "kata/.DS_Store": b"\x00"})
    learner = collect("bo", hand_in, chosen())
    assert learner.files == {CROP: SOURCE, DECODE: SOURCE}
    assert any("__MACOSX" in note for note in learner.notes), learner.notes


def test_a_folder_holding_only_a_zip_and_a_src_folder(tmp_path: Path) -> None:
    make_zip(tmp_path / "cy" / "handin.zip", {f"{CROP}/solution.py": SOURCE})
    learner = collect("cy", tmp_path / "cy", chosen())
    assert learner.files[CROP] == SOURCE
    assert "handin.zip" in learner.notes[0]

    dan = tmp_path / "dan"
    (dan / "src" / "problems" / DECODE).mkdir(parents=True)
    (dan / "src" / "problems" / DECODE / "solution.py").write_bytes(SOURCE)
    (dan / "docs").mkdir()
    (dan / ".git").mkdir()
    assert collect("dan", dan, chosen()).files[DECODE] == SOURCE


def test_zip_files_in_the_roster_are_learners(tmp_path: Path) -> None:
    roster = tmp_path / "roster"
    (roster / "ada").mkdir(parents=True)
    make_zip(roster / "ada.zip", {})
    make_zip(roster / "bo.zip", {})
    (roster / "notes.txt").write_text("not a learner")
    (roster / ".hidden.zip").write_bytes(b"")
    found = roster_folders(roster, tmp_path / "out")
    assert found == {"ada": roster / "ada", "ada.zip": roster / "ada.zip",
                     "bo": roster / "bo.zip"}
    # What is no learner's is named, for the instructor to see; dot entries are not.
    assert not_hand_ins(roster, tmp_path / "out") == ["notes.txt"]
    # A dot entry that holds a hand-in is named apart; a tool's folder is not.
    (roster / ".git" / "objects").mkdir(parents=True)
    (roster / ".cy" / "problems" / DECODE).mkdir(parents=True)
    (roster / ".dee" / DECODE).mkdir(parents=True)
    assert hidden_hand_ins(roster) == [".cy", ".dee", ".hidden.zip"]


def test_no_hand_in_takes_anothers_name(tmp_path: Path) -> None:
    """A zip whose name a folder (or an earlier zip) has, once made safe, is known by
    another name: no learner's hand-in replaces another's, whatever the listing order."""
    roster = tmp_path / "roster"
    (roster / "a\\b").mkdir(parents=True)  # shown as a\\b, as its zip's stem is
    make_zip(roster / "a\\b.zip", {})
    for name in ("q", "q.zip"):
        (roster / name).mkdir()
    make_zip(roster / "q.zip.zip", {})
    make_zip(roster / "q.zip.zip.zip", {})
    found = roster_folders(roster, tmp_path / "out")
    assert len(found) == 6 and len(set(found.values())) == 6
    assert found == {"a\\\\b": roster / "a\\b", "a\\\\b.zip": roster / "a\\b.zip",
                     "q": roster / "q", "q.zip": roster / "q.zip",
                     "q.zip.zip": roster / "q.zip.zip",
                     "q.zip.zip.zip": roster / "q.zip.zip.zip"}


def test_a_crafted_zip_reaches_nothing_outside(tmp_path: Path) -> None:
    hand_in = make_zip(tmp_path / "roster" / "eve.zip", {
        f"../../{CROP}/solution.py": b"climbed",
        f"/{tmp_path}/abs/{CROP}/solution.py": b"absolute",
        f"..\\{DECODE}\\solution.py": b"windows climb",
        f"kata/{DECODE}/solution.py": SOURCE,
    }, links={f"kata/{CROP}/solution.py": "/etc/passwd"})
    learner = collect("eve", hand_in, chosen())
    assert learner.files == {CROP: None, DECODE: SOURCE}
    assert not (tmp_path / CROP).exists() and not (tmp_path / "abs").exists()
    assert not (tmp_path / "roster" / DECODE).exists()
    assert "paths out of the archive ignored: 3" in learner.notes
    assert "links ignored: 1" in learner.notes
    # Its report says why the file is missing, where "no such file" told nothing.
    assert learner.reasons[CROP] == "a link, which is not followed in a repository or zip"


def test_the_mark_of_a_link_left_out_is_never_shown_as_the_hand_ins(tmp_path: Path) -> None:
    # A solution.py that is a link, alone at the top of a zip: the file that marks it
    # left out is the grader's, not a name of the hand-in to ignore or to suggest.
    hand_in = make_zip(tmp_path / "ivy.zip", {"notes.txt": b"hi"},
                       links={"solution.py": "/etc/passwd"})
    learner = collect("ivy", hand_in, chosen())
    assert learner.files == {CROP: None, DECODE: None}
    said = " ".join([*learner.notes, *learner.reasons.values()])
    assert "links ignored: 1" in said and ".solution.py" not in said


def test_a_zip_bomb_is_read_no_further_than_a_solution_may_be(tmp_path: Path) -> None:
    huge = b"#" * (MAX_SOLUTION_BYTES * 40)  # 40 MB inflated, a few kB zipped
    hand_in = make_zip(tmp_path / "fay.zip", {f"{CROP}/solution.py": huge})
    assert hand_in.stat().st_size < 1_000_000
    learner = collect("fay", hand_in, chosen())
    assert learner.files[CROP] is None
    assert "larger than" in learner.reasons[CROP]


def test_a_zip_of_too_many_entries_is_refused(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layouts, "MAX_ENTRIES", 5)
    hand_in = make_zip(tmp_path / "gus.zip", {f"x/{i}.txt": b"" for i in range(6)})
    learner = collect("gus", hand_in, chosen())
    assert learner.files == {CROP: None, DECODE: None}
    assert "more than 5 entries" in learner.reasons[CROP]


def test_too_many_entries_are_refused_before_zipfile_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The end record's count decides: zipfile would first build an object for every
    entry (a zip of two million empty ones took 750 MB)."""
    monkeypatch.setattr(layouts, "MAX_ENTRIES", 5)
    hand_in = make_zip(tmp_path / "hal.zip", {f"x/{i}.txt": b"" for i in range(6)})

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the zip's entries were read")

    monkeypatch.setattr(layouts.zipfile, "ZipFile", never)
    learner = collect("hal", hand_in, chosen())
    assert "more than 5 entries" in learner.reasons[CROP]


@pytest.mark.parametrize("zip64", [False, True], ids=["zip", "zip64"])
def test_an_end_record_that_understates_the_entries_is_not_believed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zip64: bool) -> None:
    """zipfile reads the central directory by its size, whatever count the end record
    gives: the entries are counted header by header, as zipfile would read them."""
    import struct

    monkeypatch.setattr(layouts, "MAX_ENTRIES", 5)
    hand_in = tmp_path / "kim.zip"
    # More than 65,535 entries make zipfile write the zip64 end records.
    entries = 0x10000 if zip64 else 8
    with zipfile.ZipFile(hand_in, "w") as archive:
        for i in range(entries):
            archive.writestr(zipfile.ZipInfo(f"x/{i}.txt"), b"")
    data = bytearray(hand_in.read_bytes())
    if zip64:
        at = data.rindex(b"PK\x06\x06")
        data[at + 24:at + 40] = struct.pack("<QQ", 1, 1)  # "one entry"
    else:
        at = data.rindex(b"PK\x05\x06")
        data[at + 8:at + 12] = struct.pack("<HH", 1, 1)
    hand_in.write_bytes(data)
    assert len(zipfile.ZipFile(hand_in).infolist()) == entries  # what zipfile would build

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the zip's entries were read")

    monkeypatch.setattr(layouts.zipfile, "ZipFile", never)
    learner = collect("kim", hand_in, chosen())
    assert "more than 5 entries" in learner.reasons[CROP]


def test_a_zip_after_a_preamble_is_counted_where_zipfile_reads_it(tmp_path: Path) -> None:
    """A self-extracting zip's stub before the archive moves its directory; the count
    follows zipfile there, and an honest hand-in is read."""
    plain = make_zip(tmp_path / "lee-plain.zip", {f"{CROP}/solution.py": SOURCE})
    hand_in = tmp_path / "lee.zip"
    hand_in.write_bytes(b"#!/bin/sh\nexit 0\n" + plain.read_bytes())
    learner = collect("lee", hand_in, chosen())
    assert learner.files[CROP] == SOURCE


def broken(path: Path, how: str) -> Path:
    """A zip whose solution cannot be inflated: its deflate stream spoilt, or a
    compression method no reader knows in both of its headers."""
    make_zip(path, {f"{CROP}/solution.py": SOURCE * 20})
    data = bytearray(path.read_bytes())
    if how == "stream":
        start = 30 + len(f"{CROP}/solution.py")  # past the local header and the name
        data[start:start + 8] = b"\xff" * 8
    else:
        for header in (b"PK\x03\x04", b"PK\x01\x02"):
            at = data.index(header)
            method = at + (8 if header == b"PK\x03\x04" else 10)
            data[method:method + 2] = (99).to_bytes(2, "little")
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("how", ["stream", "method"])
def test_a_zip_that_cannot_be_inflated_spoils_only_its_row(tmp_path: Path, how: str) -> None:
    learner = collect("ivy", broken(tmp_path / "ivy.zip", how), chosen())
    assert learner.files == {CROP: None, DECODE: None}
    assert "is not a zip that can be read" in learner.reasons[CROP]


def test_nothing_found_says_what_was_looked_for_and_what_is_near(tmp_path: Path) -> None:
    hal = tmp_path / "hal"
    (hal / "problem" / "01-crop-contxt").mkdir(parents=True)
    (hal / "problem" / "01-crop-contxt" / "solution.py").write_bytes(SOURCE)
    (hal / "notes").mkdir()
    learner = collect("hal", hal, chosen())
    reason = learner.reasons[CROP]
    assert "01-crop-context/solution.py" in reason
    assert "nearest names found: 01-crop-contxt, problem" in reason
    assert learner.notes == [reason]  # in the report, and in the table's row


def test_the_names_near_what_was_looked_for_are_shown_escaped(tmp_path: Path) -> None:
    """A hand-in's own names went into the report as they were: a folder named with an
    escape sequence cleared the learner's terminal, one with a newline forged a line."""
    ivy = tmp_path / "ivy" / "stuff"
    for name in ("\x1b[2J\x1b[31m01-crop-context\x1b[0m", "01-crop-contxt\nFAKE passed 10"):
        (ivy / name).mkdir(parents=True)
    reason = collect("ivy", tmp_path / "ivy", chosen()).reasons[CROP]
    assert "nearest names found:" in reason, reason
    assert "\x1b" not in reason and "\n" not in reason, repr(reason)
    assert "\\x1b[2J" in reason and "\\nFAKE" in reason, reason


def test_the_table_shows_how_a_hand_in_was_read(tmp_path: Path) -> None:
    from rich.console import Console

    from grader.classroom.gradebook.outputs import row_from_report, show_table

    report = {"score": 0, "max_score": 3, "problems": [{"problem": "crop-context",
              "status": "missing"}], "notes": ["no NN-slug/solution.py in hal\x1b[2J"]}
    row = row_from_report("hal", report, [find("crop-context")])
    console = Console(record=True, width=200)
    show_table(console, [row], [find("crop-context")], tmp_path)
    text = console.export_text()
    assert "no NN-slug/solution.py in hal\\x1b[2J" in text


def test_a_lone_link_is_not_followed(tmp_path: Path) -> None:
    from conftest import ROOT

    linked = tmp_path / "ivy"
    linked.mkdir()
    (linked / "x").symlink_to(ROOT / "solutions", target_is_directory=True)
    learner = collect("ivy", linked, chosen())
    assert learner.files == {CROP: None, DECODE: None}


def test_a_folder_unzipped_by_finder_or_gradescope(tmp_path: Path) -> None:
    # Gradescope unzips an upload itself: the __MACOSX/ folder is beside the kata.
    jo = tmp_path / "jo"
    (jo / "__MACOSX" / "kata" / CROP).mkdir(parents=True)
    (jo / "kata" / CROP).mkdir(parents=True)
    (jo / "kata" / CROP / "solution.py").write_bytes(SOURCE)
    learner = collect("jo", jo, chosen())
    assert learner.files[CROP] == SOURCE
    assert learner.notes == ["ignored __MACOSX", "found the problems in kata/"]


def test_a_hand_in_that_is_itself_a_link(tmp_path: Path) -> None:
    # Gradescope's run_autograder links the submission into a roster of one.
    flat = tmp_path / "upload"
    (flat / CROP).mkdir(parents=True)
    (flat / CROP / "solution.py").write_bytes(SOURCE)
    (tmp_path / "roster").mkdir()
    (tmp_path / "roster" / "submission").symlink_to(flat, target_is_directory=True)
    learner = collect("submission", tmp_path / "roster" / "submission", chosen())
    assert learner.files[CROP] == SOURCE
    assert learner.reasons[DECODE] == "no such file"  # the kata was found: one file is missing


def test_gradescope_finds_the_kata_as_the_gradebook_does(tmp_path: Path) -> None:
    from grader.classroom.gradescope_autograder import submission_root

    submission = tmp_path / "submission"
    (submission / "__MACOSX" / "gpt-kata-main").mkdir(parents=True)
    (submission / "gpt-kata-main" / "src" / "problems" / CROP).mkdir(parents=True)
    (submission / "gpt-kata-main" / "src" / "problems" / CROP / "solution.py").write_bytes(SOURCE)
    (submission / "gpt-kata-main" / "README.md").write_text("")
    assert submission_root(submission) == submission / "gpt-kata-main" / "src"


def test_a_name_given_twice_in_a_zip_is_read_once(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "kim.zip", "w") as archive, \
            pytest.warns(UserWarning, match="Duplicate name"):  # and zipfile writes it
        archive.writestr(f"{CROP}/solution.py", SOURCE)
        archive.writestr(f"{CROP}/solution.py", b"second")
        archive.writestr(f"{DECODE}/solution.py", SOURCE)
        archive.writestr(f"{DECODE}/solution.py/", b"")  # a folder of the same name
    learner = collect("kim", tmp_path / "kim.zip", chosen())
    assert learner.files == {CROP: SOURCE, DECODE: SOURCE}
    assert "names given twice ignored: 2" in learner.notes


def test_a_problems_folder_in_other_case_is_found_alike_on_every_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Problems/` beside another folder: Linux finds no problems/ there, and macOS and
    Windows, whose disks open `Problems/` as `problems/`, find none either."""
    from grader import paths

    hand_in = tmp_path / "ada"
    (hand_in / "Problems" / DECODE).mkdir(parents=True)
    (hand_in / "Problems" / DECODE / "solution.py").write_bytes(SOURCE)
    (hand_in / "docs").mkdir()
    linux = layouts.find(hand_in, hand_in, "ada", [DECODE])
    assert linux.folder == hand_in and "no NN-slug/solution.py" in linux.looked_for
    # macOS: the folder opens by the name asked for, and lists the learner's name.
    (hand_in / "Problems").rename(hand_in / "problems")
    listdir = paths.os.listdir
    monkeypatch.setattr(paths.os, "listdir", lambda where: [
        "Problems" if name == "problems" else name for name in listdir(where)])
    mac = layouts.find(hand_in, hand_in, "ada", [DECODE])
    assert mac.folder == hand_in and "no NN-slug/solution.py" in mac.looked_for
