"""The mistakes files: every one is read whole, and a file that says something its
check module cannot make fails at import, naming the file and the table."""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import pytest

from grader import paths
from grader.grading.contracts.declaring import load_check_module
from grader.grading.subject import mistakes_data
from grader.grading.subject.mistakes_data import MistakesDataError, mistakes_of
from grader.registry import problems


def test_every_table_of_every_mistakes_file_is_read_by_its_check_module() -> None:
    for problem in problems():
        load_check_module(problem)
    files = [path.resolve() for path in paths.CHECKS.rglob("*.toml")
             if path.parent.name != "examples"]  # the suite's: tests/test_submissions.py
    assert len(files) > len(problems()) // 2  # each problem's mistakes.toml, and the shared
    tables = {(path, name) for path in files
              for name in tomllib.loads(path.read_text(encoding="utf-8"))}
    read = {(path.resolve(), name) for path, name in mistakes_data.READ}
    assert tables - read == set()


def made(x: int, *, knob: Any = "right", other: Any = 0) -> tuple:
    return x, knob, other


def by_hand(x: int) -> int:
    return -x


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "shared").mkdir()
    monkeypatch.setattr(mistakes_data, "SHARED", tmp_path / "shared")
    return tmp_path


def load(folder: Path, text: str, computation: Any = made) -> list:
    (folder / "mistakes.toml").write_text(text, encoding="utf-8")
    names = {"__file__": str(folder / "check_toy.py"), "made": made, "by_hand": by_hand,
             "tools": type("Tools", (), {"made": staticmethod(by_hand)})}
    return mistakes_of(names, computation)


def test_a_table_becomes_a_mistake_with_its_runs_in_order(folder: Path) -> None:
    first, second = load(folder, '''
[[mistake]]
name = "flip the knob (twice over)"
fix = "leave it"
knobs = [{knob = "wrong"}, {knob = [1, 2], none = ["other"]}]
runs = ["by_hand"]

[[mistake]]
name = "renamed"
id = "kept-id"
fix = "a fix"
of = "tools.made"
runs = ["tools.made"]
''')
    assert (first.key, first.name, first.hint) == ("flip-the-knob", "flip the knob (twice over)",
                                                    "leave it")
    assert [r(1) for r in first.runs] == [(1, "wrong", 0), (1, (1, 2), None), -1]
    assert isinstance(first.runs[0], partial)
    assert second.key == "kept-id" and [r(2) for r in second.runs] == [-2]


def test_a_table_without_knobs_or_runs_is_made_by_the_function_named_after_its_id(
        folder: Path) -> None:
    by_name, by_id = load(folder, '''
[[mistake]]
name = "by hand (the aside is no part of the id)"
fix = "f"

[[mistake]]
name = "worded otherwise now"
id = "by-hand"
fix = "f"
''')
    assert by_name.runs == (by_hand,) and by_id.runs == (by_hand,)


def test_an_included_file_takes_the_includers_function_and_base_knobs(folder: Path) -> None:
    (folder / "shared" / "common.toml").write_text('''
[[mistake]]
name = "shared one"
fix = "shared fix"
knobs = [{knob = "shared"}]
''', encoding="utf-8")
    (renamed,) = load(folder, '''
[[mistake]]
include = "common"
with = {other = 5}
name = "said here"
''')
    assert (renamed.name, renamed.hint) == ("said here", "shared fix")
    assert [r(3) for r in renamed.runs] == [(3, "shared", 5)]


@pytest.mark.parametrize(("table", "says"), [
    ('name = "n"\nfix = "f"\nknob = [{knob = 1}]', "unknown keys ['knob']"),
    ('name = "n"\nknobs = [{knob = 1}]', "missing ['fix']"),
    ('name = "n"\nfix = ""\nknobs = [{knob = 1}]', "fix must be a non-empty string"),
    ('name = "n"\nfix = "f"\nknobs = [{nob = 1}]', "made has no knob ['nob']"),
    ('name = "n"\nfix = "f"\nruns = ["by_hnad"]', "the check module has no 'by_hnad'"),
    ('name = "n"\nfix = "f"\nof = "tools.mad"\nknobs = [{knob = 1}]', "'tools' has no 'mad'"),
    ('name = "n"\nfix = "f"', "no knobs and no runs"),
    ('name = "n"\nfix = "f"\nknobs = [{knob = 1}]\nid = "x"\nid_ = 1', "unknown keys ['id_']"),
    ('include = "missing"', "no such mistakes file"),
    ('include = "x"\nwith = 3', "`with` must be a table"),
])
def test_a_table_that_cannot_be_made_fails_naming_the_file_and_the_table(
        folder: Path, table: str, says: str) -> None:
    with pytest.raises(MistakesDataError) as raised:
        load(folder, f'[[mistake]]\nname = "fine"\nfix = "f"\nknobs = [{{}}]\n\n'
                     f'[[mistake]]\n{table}\n')
    message = str(raised.value)
    assert "mistakes.toml" in message and "number 2" in message and says in message


def test_knobs_need_a_function(folder: Path) -> None:
    with pytest.raises(MistakesDataError, match="no function to knob"):
        load(folder, '[[mistake]]\nname = "n"\nfix = "f"\nknobs = [{knob = 1}]\n', None)


def test_a_file_without_tables_fails(folder: Path) -> None:
    with pytest.raises(MistakesDataError, match=r"no \[\[mistake\]\] tables"):
        load(folder, '[[mistakes]]\nname = "n"\n')
