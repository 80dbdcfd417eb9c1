"""Counts and verbs in the grader's messages read as English."""

from __future__ import annotations

import re
import unicodedata

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from grader.checks.train_step.check_train_step import expect_floats
from grader.grading.judging.any_result import expect_tensor
from grader.grading.values.failures import GradeFailure
from grader.sandbox.worker.harnesses import _a_kind
from grader.wording import Plural, a_kind, article, columns, count, one_of, wrapped


def test_one_of_a_thing_is_singular():
    assert count(1, "token") == "1 token"
    assert [count(n, "token") for n in (0, 2)] == ["0 tokens", "2 tokens"]
    assert count(2, "match", "matches") == "2 matches"


def test_a_wrong_shape_of_logits_is_said_in_the_plural():
    with pytest.raises(GradeFailure, match=r"^the last position's logits have shape \(1, 3\)"):
        expect_tensor(torch.zeros(1, 3), torch.zeros(1, 4), Plural("the last position's logits"))
    with pytest.raises(GradeFailure, match=r"^the result has shape"):
        expect_tensor(torch.zeros(1, 3), torch.zeros(1, 4))


def test_a_kept_dtype_is_said_of_the_result_as_it_is_declared():
    """A gradient is one tensor: "the gradient of parameter 0 is torch.float64", and
    the probabilities are several."""
    got, want = torch.zeros(2, dtype=torch.float64), torch.zeros(2)
    with pytest.raises(GradeFailure, match=r"^the gradient of parameter 0 is torch.float64, "
                                           r"but the gradients were torch.float32"):
        expect_tensor(got, want, "the gradient of parameter 0", same_dtype_as="the gradients")
    with pytest.raises(GradeFailure, match=r"^the probabilities are torch.float64, but the "
                                           r"logits were torch.float32"):
        expect_tensor(got, want, Plural("the probabilities"), same_dtype_as="the logits")


def test_the_checks_declare_their_plural_outputs():
    """The plural is said where a check names its output: the last-logits check's
    judge speaks of its logits in the plural."""
    from grader.grading.contracts.declaring import load_check_module
    from grader.registry import find

    module = load_check_module(find("last-logits"))
    call = None
    with pytest.raises(GradeFailure, match=r"^the last position's logits have shape"):
        module.CONTRACT.judge(torch.zeros(1, 3), torch.zeros(1, 4), call)


def test_alternatives_are_joined_as_a_list_is_read() -> None:
    assert one_of(["top-k"]) == "top-k"
    assert one_of(["top-k", "top-p"]) == "top-k or top-p"
    assert one_of(["top-k", "top-p", "top-k-top-p"]) == "top-k, top-p or top-k-top-p"


def test_alternatives_are_joined_in_the_learners_language(monkeypatch) -> None:
    """"Did you mean top-k or top-p?" holds no English "or" in Chinese."""
    monkeypatch.setenv("GPT_KATA_LANG", "zh")
    assert one_of(["top-k", "top-p"]) == "top-k 或 top-p"
    assert one_of(["top-k", "top-p", "top-k-top-p"]) == "top-k, top-p 或 top-k-top-p"


@pytest.mark.parametrize("kind, said", [
    ("int", "an int"), ("float", "a float"), ("list", "a list"), ("object", "an object"),
    ("ellipsis", "an ellipsis"), ("uint8", "a uint8"),
    ("NoneType", "None (is a return statement missing?)"),
    ("ndarray", "an ndarray"), ("Tensor", "a Tensor"), ("tuple or list", "a tuple or list"),
])
def test_a_type_takes_the_article_english_says_it_with(kind, said):
    assert a_kind(kind) == said


def test_a_value_of_the_wrong_kind_is_named_with_its_article():
    with pytest.raises(GradeFailure, match="should be a Tensor, but it is an int$"):
        expect_tensor(3, torch.zeros(1))
    with pytest.raises(GradeFailure, match="returned an int at step 1, not a float"):
        expect_floats([3])


@pytest.mark.parametrize("value", [3, 2.5, [1], object(), ..., None, torch.zeros(1), {},
                                   __import__("numpy").zeros(1)])
def test_the_workers_drivers_say_a_kind_as_the_grader_does(value):
    """The drivers cannot import grader/wording.py (the learners' copy holds them without
    the grader): their own rule must say what it says."""
    kind = type(value).__name__
    assert _a_kind(value) == a_kind(kind)
    if value is not None:
        assert _a_kind(value) == f"{article(kind)} {kind}"


def test_chinese_is_wrapped_by_the_columns_a_terminal_gives_it() -> None:
    """Two columns a Chinese character; a line breaks between two of them, at a space,
    never inside a bracket's marks; a word longer than the width stands alone."""
    assert columns("注意力 abc") == 10
    assert wrapped("把一道题恢复为初始代码", 10) == ["把一道题恢", "复为初始代", "码"]
    assert wrapped("评分包（.zip）；设置了", 12) == ["评分包", "（.zip）；设", "置了"]
    assert wrapped("用 GPT_KATA_EXAMPLES_SEED 抽取", 10) == ["用", "GPT_KATA_EXAMPLES_SEED", "抽取"]
    assert wrapped("a  b\n c", 80) == ["a b c"]
    assert wrapped("中文 ，测试", 4) == ["中文", "，测", "试"]  # no line starts with a space


# Where a line may break, written out again from how Chinese is set, not from the
# code: between two characters of which one is wide, unless the second is a closing
# mark (or joins the first: an accent, a variation selector), or the first an opening
# one; never inside a run of narrow characters, which is a word.
CLOSING = "，。、；：？！）」』》,.;:?!)”’…—·"
OPENING = "（「『《(“‘"


def wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def may_break(before: str, after: str) -> bool:
    joins = unicodedata.category(after) in ("Mn", "Me", "Cf")
    return ((wide(before) or wide(after)) and after not in CLOSING and before not in OPENING
            and not joins)


def cells(text: str) -> int:
    """A terminal's columns, counted here by hand: two for a wide character, none for
    one that joins the character before it, one for the rest (an ambiguous-width
    quote among them, as rich and most terminals count it)."""
    return sum(0 if unicodedata.category(c) in ("Mn", "Me", "Cf") else 2 if wide(c) else 1
               for c in text)


# Words, Chinese (one of the rarer characters beyond the first plane too), marks
# around it, quotes and dots of ambiguous width, an emoji with its variation selector.
WRAPPED_TEXT = st.lists(st.sampled_from(
    ["a", "bc", "GPT_KATA_SEED", " ", "  ", "\n", "中", "文", "𠀀", "𪚥", "，", "。", "（", "）",
     "“", "”", "‘", "’", "…", "—", "·", "😀", "\ufe0f", "e\u0301", "Ａ", ".", "("]),
    max_size=30).map("".join)


@given(text=WRAPPED_TEXT, width=st.integers(1, 24))
def test_a_wrapped_line_fits_unless_nothing_breaks_it(text: str, width: int) -> None:
    """The lines are the text, its white space folded, broken only at a space or where
    Chinese may break; none is wider than `width` but one that nothing breaks."""
    folded = " ".join(text.split())
    at = 0
    for line in wrapped(text, width):
        assert line and line == line.strip() and folded.startswith(line, at), (line, folded)
        assert columns(line) == cells(line)
        if cells(line) > width:
            assert " " not in line and not any(map(may_break, line, line[1:])), (line, width)
        at += len(line)
        if at < len(folded):
            assert folded[at] == " " or may_break(line[-1], folded[at]), (line, folded[at:])
            at += folded[at] == " "
    assert at == len(folded)


def test_wide_and_ambiguous_characters_are_wrapped_as_chinese_is_set() -> None:
    """Two columns for a character of Chinese's rarer planes and an emoji, which break
    between them as Chinese does; an ambiguous-width quote or ellipsis takes one column
    and stays with the character it marks."""
    assert columns("𠀀😀") == 4 and columns("“…”") == 3 and columns("e\u0301") == 1
    assert wrapped("𠀀𠀁𠀂𠀃𠀄𠀅", 4) == ["𠀀𠀁", "𠀂𠀃", "𠀄𠀅"]
    assert wrapped("😀\ufe0f😀\ufe0f😀\ufe0f", 4) == ["😀\ufe0f😀\ufe0f", "😀\ufe0f"]
    assert wrapped("“引号”里的中文“引号”里的中文", 8) == [
        "“引号”里", "的中文", "“引号”里", "的中文"]
    assert wrapped("中文……中文……中文", 6) == ["中文……", "中文……", "中文"]
    assert wrapped("说“中文”", 4) == ["说", "“中", "文”"]
    # The space between two words is a column of the line too.
    assert wrapped("ab cd", 4) == ["ab", "cd"]
    assert wrapped("用 GPT 抽取", 5) == ["用", "GPT", "抽取"]


def test_the_grades_counts_take_the_singular_for_one():
    from grader import wording
    from grader.reports.late import describe
    from grader.reports.results import nothing_handed_in

    assert [wording.problems(n) for n in (1, 2)] == ["1 problem", "2 problems"]
    assert [wording.learners(n) for n in (1, 0)] == ["1 learner", "0 learners"]
    assert [wording.gradebooks(n) for n in (1, 3)] == ["1 gradebook", "3 gradebooks"]
    assert nothing_handed_in(1) == "no solution.py of the 1 problem graded was handed in"
    late = {"minutes": 30, "policy": "10%/h", "score_before": 10}
    assert describe({**late, "points": 1}) == "30 min late, 10%/h: -1 point (from 10)"
    assert describe({**late, "points": 2.5}) == "30 min late, 10%/h: -2.5 points (from 10)"


def test_no_message_counts_with_a_bracketed_plural():
    """"1 problem(s)" reads as a program wrote it: a message says its count in the
    singular or the plural (the catalog holds every message the code marks)."""
    from grader.locale import CATALOGS

    catalog = (CATALOGS / "zh" / "messages.po").read_text("utf-8")
    assert not re.findall(r"\w\(s\)", catalog)
