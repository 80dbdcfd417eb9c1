"""What the judge of generated text says of a text of the wrong length."""

from __future__ import annotations

import pytest

from grader.grading.judging.generated_text import judge_steps
from grader.grading.values.failures import GradeFailure

ITC = {0: "a", 1: "b", 2: " "}
PROMPT = [0, 1]  # "ab"


def said(got: str, expected: str) -> str:
    def never_asked(*args: object) -> None:
        raise AssertionError("a text of the wrong length is judged by its length alone")

    with pytest.raises(GradeFailure) as failure:
        judge_steps(got, expected, what="the text", prompt_ids=PROMPT, int_to_char=ITC,
                    choose=never_asked, window=never_asked)
    return failure.value.message


def test_the_prompt_and_the_new_text_ask_whether_the_prompt_was_returned() -> None:
    assert said("ab" + "ba ", "ba ") == ("expected 3 new characters, got 5 "
                                          "(did you return the prompt too?)")


@pytest.mark.parametrize("got", [
    "abba",    # starts with the prompt, but is not the prompt and 3 new characters
    "ba ba ",  # the text twice
    "ba",      # too short
])
def test_text_too_long_or_short_for_another_reason_is_only_counted(got: str) -> None:
    assert "prompt" not in said(got, "ba ")
    assert said(got, "ba ").startswith(f"expected 3 new characters, got {len(got)}")
