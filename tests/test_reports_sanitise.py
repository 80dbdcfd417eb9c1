"""The sanitiser every learner string passes before a report shows or stores it."""

from __future__ import annotations

import csv
import io
import re

import pytest

from grader.classroom.summary import markdown_table
from grader.grading.values.sanitise import (
    cell,
    folder_name,
    learner_error,
    markdown_cell,
    uncell,
    visible,
)
from grader.grading.values.worker_errors import one_line

# What must never reach a terminal or a file raw: C0 (but newline and tab in blocks),
# DEL, C1, bidi controls, line separators, lone surrogates.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                 "\ud800-\udfff]")


@pytest.mark.parametrize("text, shown", [
    ("\x1b[2K\r\x1b[32m✓ pass\x1b[0m", "\\x1b[2K\\r\\x1b[32m✓ pass\\x1b[0m"),
    ("nul\x00here", "nul\\x00here"),
    ("bell\x07 del\x7f", "bell\\x07 del\\x7f"),
    ("c1 \x9b31m nel\x85", "c1 \\x9b31m nel\\x85"),
    ("bidi \u202eevil\u202c \u2066iso\u2069 \u200fmark", "bidi \\u202eevil\\u202c \\u2066iso\\u2069"
     " \\u200fmark"),
    ("line\u2028sep", "line\\u2028sep"),
    ("hid\u200bden \u2060word\ufeff \ufff9note", "hid\\u200bden \\u2060word\\ufeff \\ufff9note"),
    # A tag character spells an invisible copy of an ASCII letter (U+E0041 is a hidden A).
    ("msg\U000e0041\U000e0042 \u00ad\u206a\u180e\u3164 end",
     "msg\\U000e0041\\U000e0042 \\xad\\u206a\\u180e\\u3164 end"),
    ("joined \u200d emoji 👩\u200d💻", "joined \u200d emoji 👩\u200d💻"),
    ("lone \ud800 and \udfff", "lone \\ud800 and \\udfff"),
    ("two\nlines\tand a tab", "two\\nlines\\tand a tab"),
    ("plain text, émoji 😀 and ✓ stay", "plain text, émoji 😀 and ✓ stay"),
])
def test_visible_escapes_every_class_on_one_line(text, shown):
    assert visible(text) == shown
    assert not RAW.search(visible(text)) and "\n" not in visible(text)
    visible(text).encode("utf-8")  # no lone surrogate is left to crash an encoder


def test_blocks_keep_their_lines_and_nothing_else():
    text = "first line\n\x1b[1Aup\tthere\r\nlast \ud800"
    assert visible(text, lines=True) == "first line\n\\x1b[1Aup\tthere\\r\nlast \\ud800"


def test_folder_names_are_lossless_and_never_collide():
    undecodable = b"bad\xff\xfename".decode("utf-8", "surrogateescape")
    assert folder_name(undecodable) == "bad\\xff\\xfename"
    assert folder_name(b"bad\xff\xfename") == "bad\\xff\\xfename"
    # the same text typed literally is another folder, and keeps another name
    assert folder_name("bad\\xff\\xfename") == "bad\\\\xff\\\\xfename"
    assert folder_name("\x1b[31mred\nrow") == "\\x1b[31mred\\nrow"
    assert folder_name("Zoë") == "Zoë"


@pytest.mark.parametrize("name", ["=2+3", '=HYPERLINK("http://evil.example","click")',
                                  "@SUM(A1:A9)", "+1", "-1", "\tx", "\rx", "'=quoted"])
def test_a_cell_that_would_be_a_formula_is_text(name):
    neutral = cell(name)
    assert neutral.startswith("'") and uncell(neutral) == name
    # read back through the csv module as a spreadsheet would receive it
    buffer = io.StringIO()
    csv.writer(buffer).writerow([neutral])
    assert next(csv.reader(io.StringIO(buffer.getvalue())))[0][0] == "'"


@pytest.mark.parametrize("name", ["ada", "Zoë", "bob smith", "a'b", "1+1"])
def test_an_ordinary_cell_is_left_alone(name):
    assert cell(name) == name and uncell(cell(name)) == name


def test_an_exception_message_cannot_add_lines_to_a_report():
    error = {"type": "ValueError", "message": "bad\n✓ 05-decode 5/5 checks pass\x1b[2K",
             "file": "/x/solution.py", "line": 3, "frames": ["solution.py:3 in f: x\ny"]}
    assert "\n" not in one_line(error) and "\x1b" not in one_line(error)
    assert "bad\\n✓ 05-decode" in one_line(error)
    safe = learner_error(error)
    assert safe["frames"] == ["solution.py:3 in f: x\\ny"] and safe["line"] == 3
    # the grader's own multi-line listing of weight names keeps its lines
    names = learner_error({"type": "ParameterNamesError", "message": "expected:\n  w\x1b"})
    assert names["message"] == "expected:\n  w\\x1b"


@pytest.mark.parametrize("name", ["```", "a|b", "<img src=x onerror=alert(1)>", "`x`|y",
                                  "**bold** [link](http://x)", "line\nbreak", "&lt;b&gt;"])
def test_a_markdown_cell_cannot_leave_its_cell(name):
    shown = markdown_cell(name)
    assert "\n" not in shown and "<" not in shown and ">" not in shown
    assert not re.search(r"(?<!\\)[|`*\[]", shown), shown


def test_the_summary_table_has_one_row_per_learner_and_its_columns():
    rows = [["learner", "score"], ["a|b```\n| x | y |", "1"], ["'=2+3", "2"], ["short"]]
    lines = markdown_table(rows).splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 2 + 3
    for line in table:
        # unescaped pipes: the two borders and one between each pair of columns
        assert len(re.findall(r"(?<!\\)\|", line)) == 3, line
    assert "=2+3" in table[3] and "'=2+3" not in table[3]
