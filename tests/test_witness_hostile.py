"""Submissions that send model calls for show fail, with a message naming what was found.

Each makes its text some other way than from the calls it sends: from a model it
builds for itself (or the shipped model its process held as it loaded), or
from real calls made before the calls it sends for show. Before the witnessed
checks ran on hidden models and traced each character to a call, all three
passed every check.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT, grade_batch, messages

HOSTILE = ROOT / "tests" / "hostile_witness"

ATTACKS = {
    # file: (problem, what one failing check must say: what was found, and its evidence)
    "kv_caches_nothing.py": ("kv-cache", "differs",
                             "which was given the window before it, makes"),
    "stream_text_first.py": ("stream", "differs",
                             "which was given the window before it, makes"),
    "stream_calls_first.py": ("stream", "so some of them were made before it came out",
                              "came from call"),
}


def report_of(name: str, tmp_path: Path) -> dict:
    # One grade per attack: the suite's workers each take some of the attacks, and a
    # grade of all three in a fixture would run once on each worker.
    problem = ATTACKS[name][0]
    (report,) = grade_batch([{"problem": problem, "file": HOSTILE / name}], tmp_path)
    return report


def text_checks(report: dict) -> list[dict]:
    """The checks of the generation method (a stream's WordStreamer checks pass)."""
    return [t for t in report["tests"]
            if "WordStreamer" not in t["name"] and "unit" not in t["name"]]


@pytest.mark.parametrize("name", list(ATTACKS))
def test_calls_sent_for_show_fail_the_grade(tmp_path: Path, name: str) -> None:
    _, finding, evidence = ATTACKS[name]
    report = report_of(name, tmp_path)
    failed = [t["message"] for t in text_checks(report) if t["status"] == "fail"]
    # A case of no or one character cannot tell; the cases that can fail.
    assert len(failed) >= 4, messages(report)[:3000]
    assert any(finding in m and evidence in m for m in failed), messages(report)[:3000]
    assert not [t for t in report["tests"] if t["status"] == "error"], messages(report)[:3000]


def test_the_hostile_files_are_what_the_docstring_says() -> None:
    assert sorted(p.name for p in Path(HOSTILE).glob("*.py")) == sorted(ATTACKS)
