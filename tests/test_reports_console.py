"""What a submission prints or raises reaches no terminal and no report raw, and a
console that cannot show it (cp1252, ASCII, a closed pipe) loses no report."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                 "\ud800-\udfff]")

# Prints an erase-line and carriage return that would paint a green pass over the
# failure, a NUL, a bidi override, a lone surrogate and an emoji; raises an
# exception whose message has a newline, an escape and a surrogate of its own, and an
# emoji code that must be shown as written.
EVIL = '''class Solution:
    def decode(self, token_ids, int_to_char):
        print("hi\\x1b[2K\\r\\x1b[32m\\u2713 05-decode 5/5 checks pass\\x1b[0m \\ud800 \\U0001f600"
              " \\u202eevil\\x00nul\\x9b2J")
        raise ValueError("bad\\x1b[1A\\n\\u2713 05-decode 5/5 checks pass \\ud800\\u202e :smile:")
'''


def kata_with(tmp_path: Path, source: str) -> Path:
    """A learner's kata folder whose 05-decode is `source`."""
    folder = tmp_path / "kata" / "problems" / "05-decode"
    folder.mkdir(parents=True)
    (folder / "solution.py").write_text(source, encoding="utf-8")
    (tmp_path / "kata" / "problems" / "registry.toml").write_text("")
    return tmp_path / "kata"


def env_with(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONIOENCODING", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONUTF8")}
    return {**env, **extra}


def grade_command(kata: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "grader", "grade", "decode", "--allow-unisolated",
            "--json", str(kata / "r.json"), "--junit", str(kata / "r.xml"), *extra]


def check_reports(kata: Path) -> dict:
    """Both reports are there, whole, parse, and hold no raw control character."""
    text = (kata / "r.json").read_text(encoding="utf-8")
    report = json.loads(text)
    assert report["status"] == "fail" and len(report["tests"]) == 7
    assert all(t["status"] == "fail" for t in report["tests"])
    for test in report["tests"]:
        assert not RAW.search(test["message"].replace("\n", "")), test["message"]
        assert "\n\u2713 05-decode" not in test["message"]  # the forged line stays in its own
    outputs = [t["output"] for t in report["tests"] if t["output"]]
    assert outputs and all("\\x1b[2K\\r" in o and "\\ud800" in o for o in outputs)
    assert not RAW.search(text)
    junit = (kata / "r.xml").read_bytes()
    ET.fromstring(junit)
    assert not RAW.search(junit.decode("utf-8").replace("\n", ""))
    return report


@pytest.mark.parametrize("env", [
    {"PYTHONIOENCODING": "cp1252"}, {"PYTHONIOENCODING": "ascii"},
    {"LANG": "C", "LC_ALL": "C"}, {"PYTHONIOENCODING": "utf-8"},
], ids=["cp1252", "ascii", "C-locale", "utf-8"])
def test_any_console_encoding_shows_hostile_output_and_keeps_the_reports(tmp_path, env):
    kata = kata_with(tmp_path, EVIL)
    done = subprocess.run(grade_command(kata), capture_output=True, cwd=kata,
                          env=env_with(**env), timeout=600)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    check_reports(kata)
    encoding = env.get("PYTHONIOENCODING", "utf-8")
    shown = done.stdout.decode(encoding)  # strictly: what was written is that encoding
    assert not RAW.search(shown.replace("\n", "")), shown
    # the mark falls back to a word where the console has no check mark
    mark = "FAIL 05-decode" if encoding in ("cp1252", "ascii") else "\u2717 05-decode"
    assert mark in shown
    assert "bad\\x1b[1A\\n" in shown and "7/7 checks fail" in shown
    assert ":smile:" in shown and "\U0001f604" not in shown


def test_a_closed_pipe_loses_neither_reports_nor_status(tmp_path):
    kata = kata_with(tmp_path, EVIL)
    reader, writer = os.pipe()
    os.close(reader)  # like `| head -0`: whatever is printed meets a closed pipe
    try:
        done = subprocess.run(grade_command(kata, "-v"), stdout=writer,
                              stderr=subprocess.PIPE, cwd=kata, env=env_with(), timeout=600)
    finally:
        os.close(writer)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    check_reports(kata)
    status = json.loads((kata / ".gpt-kata" / "status.json").read_text())
    assert status["decode"]["status"] == "fail"


def test_grade_piped_into_head(tmp_path):
    """`gpt-kata grade --json r.json | head -2`, as the issue ran it."""
    kata = kata_with(tmp_path, EVIL)
    command = " ".join(f"'{part}'" for part in grade_command(kata, "-v")) + " | head -2"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True,
                          cwd=kata, env=env_with(), timeout=600)
    assert done.returncode == 1, done.stderr.decode(errors="replace")
    assert len(done.stdout.decode().splitlines()) == 2
    assert b"Traceback" not in done.stderr
    check_reports(kata)
    assert json.loads((kata / ".gpt-kata" / "status.json").read_text())["decode"]["status"] \
        == "fail"


def test_a_rendering_error_is_one_line_and_keeps_the_grade(tmp_path, capsys):
    from types import SimpleNamespace

    from grader.learner.shown import show

    broken = SimpleNamespace(summaries=None)  # render cannot read it
    show(broken, None, verbose=False)  # type: ignore[arg-type]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "could not be shown" in err and "Traceback" not in err


def test_the_terminal_marks_fall_back_to_words(tmp_path):
    from rich.console import Console

    from grader.wording import glyph

    for encoding, expected in (("utf-8", "\u2713"), ("cp1252", "PASS"), ("ascii", "PASS")):
        out = Console(file=open(os.devnull, "w", encoding=encoding))  # noqa: SIM115
        assert glyph(out, "\u2713", "PASS") == expected
        out.file.close()

