"""The learners' copy's catalogs leave out what only the instructor's side says, and
keep every text the copy's own code says, though the instructor's side says it too
("pass": the Gradescope page's status and the copy's `list`)."""
from __future__ import annotations

import polib

from grader.locale import CATALOGS
from grader.maintainer.catalogs import message_texts
from grader.release.answers import catalog_without, instructors_texts
from grader.release.build import PRACTICE_FILES, RUNTIME_FILES

MESSAGES = (CATALOGS / "zh" / "messages.po").read_bytes()


def test_the_copy_keeps_every_text_its_own_code_says() -> None:
    held = {f"grader/{name}" for name in RUNTIME_FILES} | {
        f"grader/release/practice/{name}" for name in PRACTICE_FILES}
    said = {text for text, where in message_texts() if where.rpartition(":")[0] in held}
    assert {"pass", "fail", "no such file", "a broken link", "{minutes} min"} <= said
    left_out = instructors_texts(MESSAGES)
    assert not said & left_out, sorted(said & left_out)[:10]
    copy = {e.msgid: e.msgstr for e in polib.pofile(
        catalog_without(MESSAGES, left_out).decode("utf-8"))}
    assert copy["pass"] == "通过" and copy["no such file"] == "没有这个文件"


def test_the_copy_leaves_out_what_only_the_instructors_side_says() -> None:
    left_out = instructors_texts(MESSAGES)
    assert {"late penalty", "passed", "Similar solutions",
            "learners read their results in {language}"} <= left_out
    assert any("GPT_KATA_EXAMPLES_SEED" in text for text in left_out)
    # Another catalog's entries are no code's, and stay whole.
    assert not instructors_texts((CATALOGS / "zh" / "checks.po").read_bytes())
