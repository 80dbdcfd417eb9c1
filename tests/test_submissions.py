"""Learner-style submissions, graded end to end: equivalent styles pass, mistakes are named.

Each folder under tests/submissions/ holds submissions for one problem and an
`expected.toml` saying what each must get. The folder's submissions are graded
in a few grading processes (a few files each), as `gpt-kata grade` would grade
them, and every file is then checked on its own.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import SUBMISSIONS, grade_batch, messages

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CHUNK = 5  # files per grading process: small enough to spread over the cores


@dataclass(frozen=True)
class Expectation:
    folder: Path
    problem: str
    file: str
    passes: bool
    says: str  # for a mistake, text its report must contain

    @property
    def id(self) -> str:
        return f"{self.folder.name}/{self.file}"


def expectations() -> list[Expectation]:
    found = []
    for table in sorted(SUBMISSIONS.glob("*/expected.toml")):
        spec = tomllib.loads(table.read_text(encoding="utf-8"))
        for file in spec.get("equivalent", {}):
            found.append(Expectation(table.parent, spec["problem"], file, True, ""))
        for file, says in spec.get("mistakes", {}).items():
            found.append(Expectation(table.parent, spec["problem"], file, False, says))
    return found


def chunks() -> list[list[Expectation]]:
    by_folder: dict[Path, list[Expectation]] = {}
    for expectation in expectations():
        by_folder.setdefault(expectation.folder, []).append(expectation)
    return [group[i:i + CHUNK] for group in by_folder.values()
            for i in range(0, len(group), CHUNK)]


CHUNKS = chunks()


def test_every_submission_file_has_an_expectation() -> None:
    listed = {(e.folder, e.file) for e in expectations()}
    for table in SUBMISSIONS.glob("*/expected.toml"):
        spec = tomllib.loads(table.read_text(encoding="utf-8"))
        listed |= {(table.parent, file) for file in spec.get("elsewhere", {})}
        for file in table.parent.glob("*.py"):
            assert (table.parent, file.name) in listed, f"{file} is in no expected.toml"
    for folder, file in listed:
        assert (folder / file).is_file(), f"{folder.name}/expected.toml lists missing {file}"


@pytest.mark.parametrize("group", CHUNKS, ids=[f"{g[0].folder.name}-{i}" for i, g in
                                               enumerate(CHUNKS)])
def test_submissions_grade_as_expected(group: list[Expectation], tmp_path: Path,
                                       subtests) -> None:
    reports = grade_batch([{"problem": e.problem, "file": e.folder / e.file} for e in group],
                          tmp_path)
    for expectation, report in zip(group, reports, strict=True):
        with subtests.test(msg=expectation.id):
            if expectation.passes:
                assert report["status"] == "pass", messages(report)
            else:
                assert report["status"] == "fail", messages(report)
                assert expectation.says in messages(report)
