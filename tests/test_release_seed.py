"""The instructor's seed (GPT_KATA_EXAMPLES_SEED): the checks' drawn examples come from it
when it is set, so that they are not the ones anyone holding the checks can draw; and a
Gradescope bundle built with it set grades with it."""

from __future__ import annotations

import argparse
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.grading.subject import strategies
from grader.grading.subject.examples_seed import SEED_VARIABLE


def draws(description: str = "a check's examples", edited: bool = False) -> list[int]:
    """What a test decorated as the checks decorate theirs draws, decorated now (the
    seed is read when a check module is loaded); `edited`, a test of other source."""
    seen: list[int] = []

    def test(data: st.DataObject) -> None:
        seen.append(data.draw(st.integers(0, 2**62)))

    def test_edited(data: st.DataObject) -> None:
        drawn = data.draw(st.integers(0, 2**62))  # the same draw, written otherwise
        seen.append(drawn)

    chosen = test_edited if edited else test
    strategies.seeded(strategies.GRADING(given(data=st.data())(chosen)),
                      f"some-problem\0{description}")()
    return seen


def test_without_a_seed_the_examples_are_the_derandomised_ones(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert draws() == draws()
    monkeypatch.setenv(SEED_VARIABLE, "")
    assert draws() == draws()  # an empty value is no seed


def test_the_examples_do_not_change_with_the_tests_source(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check's drawn test is one function's (Contract.example_test): were its
    source in the seed, an edit of that function would change every problem's examples
    from one version of the grader to the next."""
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    assert draws(edited=True) == draws()
    monkeypatch.setenv(SEED_VARIABLE, "271828")
    assert draws(edited=True) == draws()


def test_a_seed_draws_other_examples_the_same_on_every_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SEED_VARIABLE, raising=False)
    public = draws()
    monkeypatch.setenv(SEED_VARIABLE, "271828")
    seeded = draws()
    assert seeded == draws()  # a grade is still deterministic, given the seed
    assert set(seeded[1:]).isdisjoint(public[1:])  # (both begin at the simplest example)
    monkeypatch.setenv(SEED_VARIABLE, "271829")
    assert draws()[1:] != seeded[1:]


def test_two_tests_under_one_seed_draw_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests made by one function (Contract.example_test) differ by their description."""
    monkeypatch.setenv(SEED_VARIABLE, "271828")
    assert draws("random logits")[1:] != draws("exact boundaries")[1:]


# -- the seed in the Gradescope bundle -------------------------------------------------------
def autograder_sees(script: str, tmp_path: Path, environment: dict[str, str]) -> str:
    """What the grader that run_autograder starts finds in GPT_KATA_EXAMPLES_SEED: the
    script run by bash with a stand-in for the bundle's Python that prints it."""
    run = tmp_path / "run_autograder"
    run.write_text(script, encoding="utf-8")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nprintf "%s" "${{{SEED_VARIABLE}-unset}}"\n', encoding="utf-8")
    python.chmod(0o755)
    env = {"PATH": os.environ["PATH"], "GPT_KATA_PYTHON": str(python), **environment}
    done = subprocess.run(["bash", str(run)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, check=True)
    return done.stdout


def test_a_bundle_built_with_a_seed_grades_with_it(tmp_path: Path) -> None:
    from grader.classroom.gradescope_bundle import run_script

    seed = "it's $HOME; `no` \"code\""  # quoted in the script, never run as shell
    assert autograder_sees(run_script(False, seed), tmp_path, {}) == seed
    # Gradescope's own environment cannot hold it: the bundle's is the one used.
    assert autograder_sees(run_script(True, seed), tmp_path, {SEED_VARIABLE: "other"}) == seed
    assert autograder_sees(run_script(False), tmp_path, {}) == "unset"


def test_the_bundle_takes_the_seed_set_where_it_is_built(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    from grader.classroom import gradescope_bundle as gradescope

    built: list[str] = []

    def build_bundle(root: Path, out: Path, allow_unisolated: bool,
                     seed: str = "", late: object = None,
                     code: str = "en") -> tuple[str, str]:
        built.append(seed)
        return "gpt_kata.whl", "here"

    monkeypatch.setattr(gradescope, "build_bundle", build_bundle)
    monkeypatch.setattr(gradescope, "checkout_root", lambda: tmp_path)
    args = argparse.Namespace(out=str(tmp_path / "autograder.zip"), allow_unisolated=False)
    monkeypatch.setenv(SEED_VARIABLE, "271828")
    gradescope.gradescope(args)
    said = capsys.readouterr().out
    assert "instructor's seed" in said and "271828" not in said
    monkeypatch.delenv(SEED_VARIABLE)
    gradescope.gradescope(args)
    assert built == ["271828", ""]
    assert "instructor's seed" not in capsys.readouterr().out


def test_the_copy_keeps_the_drawn_examples_that_show_the_most_mistakes() -> None:
    from grader.release.examples import EXAMPLES, most_telling

    def drawn(name: str, *ids: str) -> dict:
        return {"name": name, "mistakes": [{"id": i} for i in ids]}

    # Hypothesis draws its simplest first: an empty generation shows no mistake.
    candidates = [drawn("empty"), drawn("one", "a"), drawn("rich", "a", "b", "c"),
                  drawn("other", "d"), drawn("alike", "a", "b"), drawn("wide", "a", "b", "e")]
    chosen = [c["name"] for c in most_telling(candidates, lambda c: c["mistakes"])]
    # The most mistakes first (the earlier of two alike); then what adds the most not
    # yet shown, and of two that add as many, the one that shows the most in all.
    assert chosen == ["rich", "wide", "other"][:EXAMPLES]
    assert [c["name"] for c in most_telling(candidates[:2], lambda c: c["mistakes"])] == [
        "one", "empty"]


def test_a_drawn_example_on_a_tie_is_not_kept_for_the_copy() -> None:
    # Keeping the two largest of four logits, three of them equal: which two is a tie that
    # float rounding breaks, and a stored answer would judge only one way of breaking it.
    import torch

    from grader.release.ties import steady

    class Reference:
        def keep_two(self, x: torch.Tensor) -> torch.Tensor:
            kept = x.topk(2).indices
            return torch.full_like(x, float("-inf")).scatter(0, kept, x[kept])

    contract = type("Contract", (), {"method": "keep_two", "iterate": False})()
    for logits, alike in ((torch.tensor([5.0, 3.0, 1.0, 2.0]), True),
                          (torch.tensor([5.0, 5.0, 1.0, 5.0]), False)):
        answer = Reference().keep_two(logits)
        assert steady(contract, Reference(), (logits,), [answer]) is alike, logits


def test_a_drawn_filter_that_may_keep_either_of_two_tokens_of_probability_0_is_not_kept(
        ) -> None:
    # Top-p keeping three of logits thousands apart: in float32 every token but the two
    # largest has probability 0, so the third kept is any of them (or a -inf one, which
    # then seems removed). The instructor's judge takes each such answer; a stored
    # answer, by the copy's judge, takes only the reference's.
    import torch

    from grader.checks.top_p.check_top_p import CONTRACT
    from grader.grading.subject.reference import load_reference
    from grader.registry import find
    from grader.release.practice import judge
    from grader.release.ties import judged_otherwise

    reference = load_reference(find("top-p"))
    logits = torch.tensor([[5000.0, 0.0, 1117.0, float("-inf"), 0.0, 7964.0, 8041.0,
                            float("-inf")]])

    def taken(answer: torch.Tensor, want: torch.Tensor) -> bool:
        return judge.same_outcome(("value", answer), ("value", want), "filtering", (logits,))

    tied = (logits, 0.7238, 3)
    expected = reference.top_p_filter(*tied)
    assert judged_otherwise(CONTRACT, reference, tied, expected, taken)
    # Kept by logits alone (one token with a probability above 0 is enough): no tie.
    apart = (torch.tensor([[3.0, 1.0, 2.0, 0.5]]), 0.5, 1)
    assert not judged_otherwise(CONTRACT, reference, apart, reference.top_p_filter(*apart),
                                taken)
    # Top-k keeps by logit, tiny probabilities or not: its judge takes no swapped answer.
    from grader.checks.top_k.check_top_k import CONTRACT as TOP_K
    from grader.release.ties import swapped_ties

    top_k = load_reference(find("top-k"))
    by_logit = (logits, 3)
    kept = top_k.top_k_filter(*by_logit)
    assert swapped_ties(logits, kept)
    assert not judged_otherwise(TOP_K, top_k, by_logit, kept, taken)
