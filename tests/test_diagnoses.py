"""The parts of a diagnosis that need no grading run: inputs shown in the learner's
terms, printed output cut at a line end, one name for one bug across checks.

The diagnoses themselves are graded end to end from each problem's examples/
(grader/checks/<slug>/examples/).
"""

from __future__ import annotations

import pytest
import torch

from grader.grading.contracts.declaring import load_check_module
from grader.grading.engine.plugin import with_inputs
from grader.grading.subject.cases import SHIPPED, prompt_ids
from grader.grading.subject.diagnosis import Diagnoses, find_mistake
from grader.grading.subject.inputs import describe_inputs
from grader.grading.values.equality import ErrorText, outcome_of
from grader.grading.values.failures import GradeFailure, Mistake
from grader.model import artifacts
from grader.model.spec import ModelSpec
from grader.reports.report import cut_output


def test_a_shipped_call_shows_its_prompt_text_and_no_grader_objects():
    lines = describe_inputs({"model": SHIPPED, "context": prompt_ids("Tom ran"),
                             "eos_id": 4, "stop": ("frog hid", "hid")})
    text = "\n".join(lines)
    assert lines[0] == "model: the shipped model"
    assert "'Tom ran' (7 tokens)" in lines[1]
    assert artifacts.shipped_vocab()[4] == "." and "eos_id: 4 (the character '.')" in text
    assert "stop: ('frog hid', 'hid')" in text
    assert "ModelSpec" not in text and "object at 0x" not in text


def test_a_random_model_a_generator_and_its_state_are_described_not_dumped():
    generator = torch.Generator().manual_seed(1234)
    spec = ModelSpec("random", {"vocab_size": 5, "context_length": 3, "n_layer": 1,
                                "n_head": 1, "n_embd": 4}, 9)
    text = "\n".join(describe_inputs({"model": spec, "generator": generator,
                                      "initial_state": generator.get_state(),
                                      "context_length": 3}))
    assert "vocab_size 5" in text and "weights seeded with 9" in text
    assert "a torch.Generator seeded with 1234" in text
    assert "a generator's state" in text
    # without a vocabulary in the call, an int stays a number
    assert "context_length: 3" in text.splitlines()


def test_ids_are_spelled_with_the_vocabulary_the_call_carries():
    vocab = {0: "a", 1: "b", 2: "c"}
    text = "\n".join(describe_inputs({"context": torch.tensor([[2, 0, 1]]),
                                      "int_to_char": vocab, "new_chars": 2}))
    assert "'cab' (3 tokens)" in text
    assert "new_chars: 2" in text.splitlines()  # a count, not the character 'c'


def test_large_tensors_are_summarised():
    logits = torch.zeros(1, 100)
    logits[0, 5] = float("-inf")
    logits[0, 7] = 3.5
    (line,) = describe_inputs({"logits": logits})
    assert "shape (1, 100)" in line and "to 3.5" in line and "1 of them -inf" in line


def test_printed_output_is_cut_at_a_line_end_with_the_lines_left_out():
    lines = [f"line {i}" for i in range(30)]
    text = "\n".join(lines) + "\n"
    cut = cut_output(text, limit=10_000, max_lines=10)
    assert cut.splitlines()[:10] == lines[:10]
    assert cut.splitlines()[10] == "… (20 more lines; output truncated)"
    short = cut_output(text, limit=20)  # "line 0\nline 1\n" is 14 characters
    assert short.startswith("line 0\nline 1\n…") and "(28 more lines" in short
    assert cut_output("all of it\n") == "all of it\n"


def test_one_long_line_is_cut_inside_it_and_says_so():
    cut = cut_output("x" * 50 + "\nnext\n", limit=20)
    assert cut.startswith("x" * 20 + "…") and "the line goes on, 1 more line" in cut


def add_note(failure: BaseException, note: str) -> None:
    """A note as hypothesis attaches it: add_note from Python 3.11, the __notes__
    list it stands for on 3.10."""
    failure.__notes__ = [*getattr(failure, "__notes__", []), note]


def test_the_inputs_replace_hypothesis_notes():
    failure = GradeFailure("wrong token")
    failure.inputs = "smallest failing input found:\n  probs: a tensor"
    add_note(failure, "Draw 1 (logits): tensor([[0., 0.]])")
    shown = with_inputs(failure.diagnosis.says, failure)
    assert shown == "wrong token\nsmallest failing input found:\n  probs: a tensor"


def test_a_failure_keeps_its_fix_apart_from_what_it_says():
    failure = GradeFailure("the token is right, but the generator was not put back.",
                           hint="call generator.set_state(initial_state)")
    assert failure.diagnosis.says == "the token is right, but the generator was not put back."
    assert failure.diagnosis.hints == ["call generator.set_state(initial_state)"]
    # A traceback still shows the fix after the message.
    assert str(failure).endswith("put back. Hint: call generator.set_state(initial_state)")


def off_by(k: int):
    return lambda x: x + k


def test_a_mistake_named_once_is_preferred_where_an_input_cannot_tell_two_apart():
    # Both mistakes give 1 on the input 0; only the second gives 12 on the input 10.
    first = Mistake("add one", "fix a", off_by(1))
    second = Mistake("add one, or eleven past ten", "fix b",
                     lambda x: x + (2 if x >= 10 else 1))
    memory = Diagnoses()
    assert find_mistake(("value", 12), [first, second], (10,), memory=memory) is second
    assert memory.ruled_out == {"add one"}
    # the ambiguous input now gets the same name, not the first in the list
    assert find_mistake(("value", 1), [first, second], (0,), memory=memory) is second
    # without that memory it would get the first
    assert find_mistake(("value", 1), [first, second], (0,)) is first


def test_the_first_failure_that_fits_two_mistakes_is_named_by_the_other_cases():
    # The learner adds 1 below ten and 2 from ten on: the input 0 fits both mistakes,
    # and is the first to fail; the learner's answer 12 to the other case, 10, is the
    # second's alone.
    first = Mistake("add one", "fix a", off_by(1))
    second = Mistake("add one, or two from ten", "fix b", lambda x: x + (2 if x >= 10 else 1))
    asked = []

    def elsewhere():
        asked.append(True)
        return [((10,), ("value", 12), False)]

    memory = Diagnoses()
    assert find_mistake(("value", 1), [first, second], (0,), memory=memory,
                        elsewhere=elsewhere) is second
    assert memory.named == ["add one, or two from ten"]
    # where the other cases fit neither, the first that fits this one is named
    assert find_mistake(("value", 1), [first, second], (0,),
                        elsewhere=lambda: [((10,), ("value", 99), False)]) is first


def test_of_two_mistakes_that_fit_the_one_that_gives_the_learners_error_elsewhere_is_named():
    # As a loop that never crops: on a window one token over, it fails as cropping one
    # too many does; on a long prompt it fails with the prompt's own length, which only
    # not cropping gives. An error is no evidence against a mistake, but the same error
    # is evidence for it.
    def window_of(kept):
        def run(length: int) -> str:
            if kept(length) > 48:
                raise ValueError(f"the model sees at most 48 tokens, but got {kept(length)}")
            return "text"
        return run

    one_over = Mistake("crop one too many", "fix a", window_of(lambda n: min(n, 49)))
    none = Mistake("do not crop", "fix b", window_of(lambda n: n))
    learner = window_of(lambda n: n)
    outcome = ("error", ErrorText.of("ValueError", "the model sees at most 48 tokens, but got 49"))
    elsewhere = [((103,), outcome_of(learner, 103), False)]
    assert find_mistake(outcome, [one_over, none], (49,),
                        elsewhere=lambda: elsewhere) is none


def test_a_mistake_made_in_two_ways_keeps_the_learners_error_where_one_way_raises_it():
    # Cropping once before the loop, or not at all: one mistake, two ways. On one new
    # character from a long prompt, the first gives text and the second raises the
    # window's error. A learner who never crops raises it: the way that raises is theirs,
    # so the text of the other way refutes nothing.
    def generation(crop_first: bool, one_over: bool = False):
        def run(prompt: int, new: int) -> str:
            length = min(prompt, 4 + one_over) if crop_first else prompt
            if length + max(new - 1, 0) * (not one_over) > 4:
                raise ValueError(f"the model sees at most 4 tokens, but got {length}")
            return "text"
        return run

    once_or_not = Mistake("crop once, or not at all", "fix a", generation(True),
                          generation(False))
    one_too_many = Mistake("crop one too many", "fix b", generation(True, one_over=True))
    learner = generation(False)
    elsewhere = [((6, 1), outcome_of(learner, 6, 1), False)]
    assert elsewhere[0][1][0] == "error"
    got = outcome_of(learner, 5, 3)
    assert find_mistake(got, [one_too_many, once_or_not], (5, 3),
                        elsewhere=lambda: elsewhere) is once_or_not


def test_a_mistake_the_learner_answers_right_elsewhere_is_not_named():
    """On four equal logits, filling the removed ones with 0 gives the input back, as
    keeping them all does: a learner who keeps them all fits that mistake by chance. Their
    answer to another case, right where the mistake would be wrong, shows it is not theirs."""
    fill = Mistake("fill with 0", "fix", lambda x: 0 if x == 0 else -x)
    learner = ("value", 0)
    memory = Diagnoses()
    right_where_it_is_wrong = [((3,), ("value", 3), True)]
    assert find_mistake(learner, [fill], (0,), memory=memory,
                        elsewhere=lambda: right_where_it_is_wrong) is None
    assert memory.refuted == {"fill with 0"} and memory.named == []
    # refuted once, it is passed over on later calls without asking again
    assert find_mistake(learner, [fill], (0,), memory=memory,
                        elsewhere=lambda: pytest.fail("asked again")) is None
    # wrong there too (a second bug), the learner's answer refutes nothing
    assert find_mistake(learner, [fill], (0,),
                        elsewhere=lambda: [((3,), ("value", 4), False)]) is fill
    # and without the other cases, the one call's evidence names it
    assert find_mistake(learner, [fill], (0,)) is fill


def test_a_mistake_told_apart_once_is_named_again_without_running_the_rest():
    """The learner's other answers do not change: the scan of every mistake and the
    learner's other cases are paid for once a grade, not on every failing call."""
    ran = []
    first = Mistake("add one, or two from ten", "fix b",
                    lambda x: ran.append("first") or x + (2 if x >= 10 else 1))
    second = Mistake("add one", "fix a", lambda x: ran.append("second") or x + 1)
    asked = []

    def elsewhere():
        asked.append(True)
        return [((10,), ("value", 12), False)]

    memory = Diagnoses()
    assert find_mistake(("value", 1), [second, first], (0,), memory=memory,
                        elsewhere=elsewhere) is first
    assert memory.told_apart == {"add one, or two from ten"} and len(asked) == 1
    ran.clear()
    assert find_mistake(("value", 3), [second, first], (2,), memory=memory,
                        elsewhere=elsewhere) is first
    assert ran == ["first"] and len(asked) == 1
    # where the other cases named none of the look-alikes, each later call asks again
    memory = Diagnoses()
    nowhere = [((10,), ("value", 99), False)]
    assert find_mistake(("value", 1), [second, first], (0,), memory=memory,
                        elsewhere=lambda: nowhere) is second
    assert memory.told_apart == set()


def test_a_mistake_that_gives_the_right_answer_is_not_ruled_out():
    silent = Mistake("add zero here", "fix", off_by(0))
    memory = Diagnoses()
    assert find_mistake(("value", 5), [silent], (3,), expected=("value", 3),
                        memory=memory) is None
    assert memory.ruled_out == set()


def test_every_case_of_every_check_can_be_shown():
    """A failure's inputs are rendered while it is reported: no argument of any check
    may break that, or show up as a grader object."""
    from grader.grading.contracts.contract_derivation import reference_signature
    from grader.registry import problems

    for problem in problems():
        contract = load_check_module(problem).CONTRACT
        names = reference_signature(problem, contract.method).names
        for case_id, args in contract.case_args.items():
            text = "\n".join(describe_inputs(dict(zip(names, args))))
            assert "object at 0x" not in text and "ModelSpec(" not in text, (case_id, text)
            assert "<" not in text.split(":", 1)[0], (case_id, text)


def test_the_sample_probe_tells_the_argmax_from_the_generators_draws():
    from grader.grading.judging.generator_draws import PROBE_SEEDS, probe_probs

    probs = probe_probs()
    assert int(probs.argmax()) == 0 and int((probs == probs.max()).sum()) == 1
    draws = [int(torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(seed)))
             for seed in PROBE_SEEDS]
    assert 0 not in draws and draws[0] != draws[1]


@pytest.mark.parametrize("tokens", [[5, 5, 7, 9], [5, 7, 5, 9], [5, 5, 5, 5]])
def test_a_draw_that_repeats_itself_once_by_chance_is_still_named(tokens):
    """A draw from the global state gives the same token twice in a row one time in a
    thousand: the probe draws with the first seed three times."""
    from grader.grading.judging.generator_draws import NOT_THE_GENERATOR, how_drawn

    drawn = iter(tokens)
    diagnosis = how_drawn(lambda *args: ("value", torch.tensor([next(drawn)])))
    assert diagnosis and diagnosis.mistake is NOT_THE_GENERATOR


def test_a_mistake_that_does_not_apply_is_not_ruled_out():
    only_for_big = Mistake("add one to big numbers", "fix", lambda x: x + 1 if x > 9 else None)
    memory = Diagnoses()
    assert find_mistake(("value", 5), [only_for_big], (3,), memory=memory) is None
    assert memory.ruled_out == set()


def test_nan_names_no_mistake():
    """A mean of nothing is nan, and so is every other broken computation: a mistake
    that gives nothing but nan on these arguments does not apply to them."""
    mean_of_nothing = Mistake("average an empty slice", "fix",
                              lambda x: x[1:].mean() if x.dim() else x)
    nan = ("value", torch.tensor(float("nan")))
    memory = Diagnoses()
    assert find_mistake(nan, [mean_of_nothing], (torch.ones(1),), memory=memory) is None
    assert memory.ruled_out == set()
    assert find_mistake(("value", torch.tensor(1.0)), [mean_of_nothing],
                        (torch.ones(3),)) is mean_of_nothing


def test_hypothesis_notes_that_name_grader_objects_are_left_out():
    failure = GradeFailure("wrong")
    add_note(failure, "Falsifying example: test(kata=Kata(submission=<grader.sandbox."
                     "SubmissionProcess object at 0x7f>), k=2)")
    assert with_inputs("wrong", failure) == "wrong"
    failure = GradeFailure("wrong")
    add_note(failure, "Draw 1 (vocab_size): 3")
    assert with_inputs("wrong", failure) == ("wrong\nsmallest failing input found:\n"
                                             "  Draw 1 (vocab_size): 3")


def test_nan_is_stored_for_no_mistake_in_a_learners_copy():
    """The copy's stored answers of the mistakes leave nan out, as find_mistake does:
    the copy would name it for every nan answer."""
    from types import SimpleNamespace

    from grader.registry import find
    from grader.release.build import mistakes_answers

    loss = find("loss")
    nan = Mistake("average an empty slice", "fix", lambda x: torch.tensor(float("nan")))
    one = Mistake("add one", "fix", lambda x: x + 1)
    stored = mistakes_answers(loss, SimpleNamespace(iterate=False), [nan, one],
                              (torch.zeros(2),), lambda outcome: False)
    assert [entry["name"] for entry in stored] == ["add one"]


def test_a_vocabularys_ids_out_of_range_nan_or_inf_are_no_renumbering():
    from grader.registry import find

    renumbered = load_check_module(find("vocabulary")).renumbered
    assert renumbered(torch.tensor([1, 0, 1]), "bab", "ab")  # consistent, not sorted
    assert not renumbered(torch.tensor([3, 0, 3]), "bab", "abab")  # sorted(corpus): 3 >= 2
    for bad in (float("nan"), float("inf")):
        assert not renumbered(torch.tensor([bad, 0.0, bad]), "bab", "ab")


def test_k_T_on_one_heads_slice_is_named_on_every_shipped_case(tmp_path) -> None:
    """k.T on a head's (B, T, head_size) slice, in a loop over the heads, raises another
    error than on all the heads at once: the mistake runs in both layouts, so the fixed
    cases name it, not only a drawn example whose shapes happen to agree."""
    from functools import partial

    from conftest import examples
    from learner_examples import mistake_text

    from grader.grading.subject.reference import fresh_args
    from grader.grading.values.equality import outcome_of
    from grader.model import parts
    from grader.registry import find

    source = tmp_path / "looped.py"
    source.write_text(mistake_text(examples("multi-head-attention"),
                                   "keys_turned_with_dot_t_head_by_head"), encoding="utf-8")
    learner: dict = {}
    exec(compile(source.read_text(encoding="utf-8"), str(source), "exec"), learner)  # noqa: S102
    contract = load_check_module(find("multi-head-attention")).CONTRACT
    for case_id, args in contract.case_args.items():
        got = outcome_of(partial(parts.run_module, learner["CausalSelfAttention"]),
                         *fresh_args(args))
        assert got[0] == "error", (case_id, got)
        named = find_mistake(got, contract.mistakes, args)
        assert named is not None and named.name == "transpose k with k.T", (case_id, got)


@pytest.mark.parametrize("knob", [{"split": "time"}, {"merge": "channels"}, {"per_head": True}])
def test_a_loop_over_the_heads_refuses_a_layout_knob(knob: dict) -> None:
    """The loop over the heads keeps its own layout: a mistake that also asked for
    another one must be told, not graded as if it had it."""
    from grader.grading.subject import transformer

    w = {"qkv.weight": torch.zeros(12, 4), "qkv.bias": torch.zeros(12),
         "proj.weight": torch.zeros(4, 4), "proj.bias": torch.zeros(4)}
    with pytest.raises(ValueError, match="loop attends head by head"):
        transformer.layer(w, 2, torch.zeros(1, 3, 4), loop=True, **knob)
    assert transformer.layer(w, 2, torch.zeros(1, 3, 4), loop=True).shape == (1, 3, 4)


def test_a_softmax_down_the_columns_is_named_on_huge_logits() -> None:
    """Shifted by each column's maximum, as a learner turns dim=-1 into dim=0, a row of
    huge logits gives every column 1 where the whole tensor's maximum leaves 0/0: the
    same bug was named on two fixed cases and not on this one."""
    from grader.registry import find

    module = load_check_module(find("softmax"))
    (logits,) = module.CONTRACT.case_args["huge-logits"]
    exps = torch.exp(logits - logits.max(dim=0, keepdim=True).values)
    down_the_columns = exps / exps.sum(dim=0, keepdim=True)
    named = find_mistake(("value", down_the_columns), module.MISTAKES, (logits,),
                         module.CONTRACT.matches)
    assert named is not None and named.name == "normalise over the wrong dimension"
