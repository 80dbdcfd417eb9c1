"""Gradescope's results.json shows what a hostile submission printed and raised as
visible escapes, never raw, and is whole."""

from __future__ import annotations

import json
import re

from test_reports_console import EVIL, RAW

from grader.classroom import gradescope_autograder as gradescope


def test_results_of_a_hostile_submission_are_clean(tmp_path, monkeypatch):
    root = tmp_path / "autograder"
    (root / "submission" / "05-decode").mkdir(parents=True)
    (root / "submission" / "05-decode" / "solution.py").write_text(EVIL, encoding="utf-8")
    monkeypatch.setenv(gradescope.UNISOLATED_VARIABLE, "1")
    assert gradescope.run(root) == 0
    text = (root / "results" / "results.json").read_text(encoding="utf-8")
    assert not RAW.search(text)  # JSON escapes only \n itself; nothing else is raw
    results = json.loads(text)
    decode = [t for t in results["tests"] if t["name"].startswith("05-decode")]
    assert decode and all(t["score"] == 0 for t in decode)
    for test in decode:
        assert not RAW.search(test["output"].replace("\n", "")), test["output"]
        assert not re.search("\n\u2713 05-decode", test["output"])
    assert any("\\x1b[2K\\r" in t["output"] for t in decode)
