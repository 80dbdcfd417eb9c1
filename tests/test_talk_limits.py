"""How long the learner's code may take while it talks: a grade's limits, and time for
each character asked for, so that a long text through a served model is not a hang."""

from __future__ import annotations

import pytest

from grader.learner.tools.talk import SECONDS_A_CHARACTER, Implementation, talk_limits
from grader.registry import find
from grader.sandbox.wire.limits import DEFAULTS


def test_a_long_talk_gets_more_time_than_a_grade_and_nothing_else() -> None:
    short, long = talk_limits(200), talk_limits(6000)
    assert DEFAULTS.call_timeout <= short.call_timeout < long.call_timeout
    assert DEFAULTS.problem_budget <= short.problem_budget < long.problem_budget
    assert long.call_timeout - short.call_timeout == pytest.approx(5800 * SECONDS_A_CHARACTER)
    # Only time grows: the memory, CPU and scratch limits stay a grade's.
    assert (long.memory_bytes, long.cpu_seconds, long.scratch_bytes) == (
        DEFAULTS.memory_bytes, DEFAULTS.cpu_seconds, DEFAULTS.scratch_bytes)


def test_the_learners_worker_is_held_to_the_talks_limits() -> None:
    implementation = Implementation(find("sampler"), True, pool=None,  # type: ignore[arg-type]
                                    limits=talk_limits(6000))
    assert implementation.process.limits == talk_limits(6000)


@pytest.mark.parametrize("temperature", [float("nan"), float("inf"), -0.5])
def test_a_temperature_that_is_no_finite_number_or_below_0_is_refused(temperature) -> None:
    """nan passed `< 0` and reached the learner's sampler, whose torch error blamed
    their code; inf divides every logit to nothing."""
    import argparse

    from grader.learner.errors import UsageError
    from grader.learner.tools.talk_text import check_options

    args = argparse.Namespace(chars=10, temperature=temperature, top_k=None, top_p=None,
                              no_repeat_ngram=None)
    with pytest.raises(UsageError, match="--temperature must be a finite number"):
        check_options(args)
    check_options(argparse.Namespace(chars=10, temperature=0.0, top_k=None, top_p=None,
                                     no_repeat_ngram=None))


def test_a_text_that_every_ban_ends_says_why_it_is_short(tmp_path) -> None:
    """With --no-repeat-ngram 1 every character can be used once: the text ends early,
    and talk says why instead of leaving a short text unexplained."""
    import subprocess
    import sys

    from learner import learner_kata

    done = subprocess.run([sys.executable, "-m", "grader", "talk", "Tom", "--chars", "80",
                           "--no-repeat-ngram", "1", "--seed", "0"], cwd=learner_kata(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    written = len(done.stdout.rstrip("\n")) - len("Tom")
    assert written < 80
    assert (f"the text stopped after {written} of 80 characters: with --no-repeat-ngram 1"
            in done.stderr)
