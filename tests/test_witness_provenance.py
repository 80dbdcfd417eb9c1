"""Where each character came from: traced to the witnessed passes, and hidden models.

The passes here are made by hand, as the witness logs them: the window each row
saw and the logits it answered. A token is traced to the pass that saw the
window before it, and must be the pick Track 1's sampling makes from its logits.
"""

from __future__ import annotations

import pytest
import torch

from grader.grading.contracts.text_from_calls import (
    Untraced,
    expect_streamed_from_calls,
    trace_tokens,
)
from grader.grading.judging.generated_text import sampled_choice
from grader.grading.subject import cases
from grader.grading.values.failures import GradeFailure
from grader.model import artifacts
from grader.model import hidden_weights as hidden
from grader.model.spec import ModelSpec
from grader.sandbox.host.witness import Pass
from grader.sandbox.wire.encoding import decode, encode
from grader.sandbox.worker.worker_models import ModelRefused, WorkerModels

VOCAB = dict(enumerate("ab c."))


def hide(spec: ModelSpec) -> ModelSpec:
    return hidden.hide(spec, artifacts.build_model)
WINDOW = 4


def logits_picking(token: int) -> torch.Tensor:
    """Logits from which Track 1's sampling surely picks `token`."""
    logits = torch.full((len(VOCAB),), -30.0)
    logits[token] = 10.0
    return logits


def honest(prompt: list[int], tokens: list[int]) -> list[Pass]:
    """One pass per token, each on the window before it, picking it."""
    passes, ids = [], list(prompt)
    for token in tokens:
        window = ids[-WINDOW:]
        logits = logits_picking(token)
        passes.append(Pass(window, logits, [window], logits.view(1, -1)))
        ids.append(token)
    return passes


def test_the_logits_pick_what_they_are_made_to():
    for token in VOCAB:
        choice = sampled_choice(torch.softmax(logits_picking(token).double(), -1),
                                cases.seed_state(0))
        assert choice.best == token


def test_each_token_is_traced_to_the_pass_that_saw_the_window_before_it():
    prompt, tokens = [0, 1], [2, 0, 0, 0, 0, 0, 3]  # windows repeat once the text loops
    assert trace_tokens(tokens, prompt, WINDOW, honest(prompt, tokens), VOCAB) == list(
        range(len(tokens)))


def test_a_token_the_pass_did_not_pick_is_untraced():
    prompt, tokens = [0, 1], [2, 0, 3]
    passes = honest(prompt, [2, 0, 4])  # the pass for the third token picks '.'
    found = trace_tokens(tokens, prompt, WINDOW, passes, VOCAB)
    assert isinstance(found, Untraced) and found.step == 2
    assert "model call 3, which was given the window before it, makes '.'" in found.reason


def test_a_window_no_pass_saw_is_untraced():
    prompt, tokens = [0, 1], [2, 0, 3]
    passes = honest(prompt, tokens)
    passes[1] = Pass([4], passes[1].logits, [None], passes[1].last)  # a cache it did not make
    found = trace_tokens(tokens, prompt, WINDOW, passes, VOCAB)
    assert isinstance(found, Untraced) and found.step == 1
    assert "no model call since call 1" in found.reason and "'ab ' (3 tokens)" in found.reason


def test_a_pass_in_another_row_of_a_batch_is_found_too():
    prompt, tokens = [0, 1], [2]
    logits = torch.stack([logits_picking(4), logits_picking(2)])
    passes = [Pass([3], logits[0], [[3], [0, 1]], logits)]
    assert trace_tokens(tokens, prompt, WINDOW, passes, VOCAB) == [0]


def test_a_stream_whose_chunks_come_out_as_they_are_made_passes():
    # chunks "ab ", "c." after 3 and 5 calls (the loop yields right after sampling)
    expect_streamed_from_calls([["ab ", 3], ["c.", 5]], [0, 1, 2, 3, 4], slack=1)
    # and with the model one step ahead: the next character's call before the yield
    expect_streamed_from_calls([["ab ", 4], ["c.", 5]], [0, 1, 2, 3, 4], slack=1)


def test_a_stream_that_made_its_text_first_fails():
    # all five characters made by calls 1-5; then five calls for show, one per character
    with pytest.raises(GradeFailure, match="so some of them were made before it came out"):
        expect_streamed_from_calls([["ab ", 8], ["c.", 10]], [0, 1, 2, 3, 4], slack=1)


def test_a_chunk_out_before_the_call_that_made_it_fails():
    with pytest.raises(GradeFailure, match="made after it came out"):
        expect_streamed_from_calls([["ab ", 2], ["c.", 5]], [0, 1, 2, 3, 4], slack=1)


# -- hidden models ----------------------------------------------------------------------

def test_a_hidden_model_carries_no_seed_of_its_weights_and_stays_the_same():
    declared = ModelSpec("random", {"vocab_size": 5, "context_length": 4, "n_layer": 1,
                                    "n_head": 1, "n_embd": 4}, 2)
    stand_in = hide(declared)
    assert stand_in.kind == "hidden" and stand_in.config == declared.config
    assert hide(declared) == stand_in  # the same stand-in all grade
    assert decode(encode(stand_in)) == stand_in  # what the worker is sent
    sent = repr(encode(stand_in))
    _, seed, _ = hidden._secrets[stand_in.seed]  # noqa: SLF001 - the secret itself
    assert str(seed) not in sent and hidden.declared(stand_in) == declared
    model, base = artifacts.build_model(stand_in), artifacts.build_model(declared)
    context = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert not torch.allclose(model(context), base(context))
        assert torch.equal(hidden.private_model(stand_in)(context), model(context))


def test_building_a_hidden_model_leaves_the_global_random_state_alone():
    stand_in = hide(ModelSpec("shipped"))  # loads the shipped model, once
    state = torch.random.get_rng_state()
    hidden.private_model(stand_in)
    assert torch.equal(torch.random.get_rng_state(), state)


def test_a_worker_cannot_build_a_hidden_model():
    with pytest.raises(ModelRefused, match="read by the grader only"):
        WorkerModels().model(hide(ModelSpec("shipped")))
    with pytest.raises(ValueError, match="not a model drawn by this grader"):
        hidden.hidden_model(ModelSpec("hidden", {"context_length": 4}, 12345))


def test_the_witness_serves_from_an_instance_the_reference_does_not_share():
    from grader.grading.subject.reference import fresh
    from grader.sandbox.host.witness import own_instance

    stand_in = hide(ModelSpec("shipped"))
    reference, witnessed = fresh(stand_in), own_instance(stand_in)
    assert witnessed is not reference
    context = torch.tensor([[3, 4, 5]])
    calls = []
    inner = witnessed.forward_with_cache
    witnessed.forward_with_cache = lambda *a: calls.append(1) or inner(*a)
    with torch.no_grad():
        reference(context)  # the reference reads a window first
        witnessed(context)  # the witness still computes it: no memo is shared
    assert calls == [1]


def test_right_text_that_no_call_made_fails_and_wrong_text_shows_where_the_calls_differ():
    from grader.grading.contracts.text_from_calls import judge_from_calls
    from grader.grading.subject.kata import Call
    from grader.sandbox.host.process import CallOutcome

    prompt, tokens = [0, 1], [2, 0, 3]
    text = "".join(VOCAB[t] for t in tokens)
    record = CallOutcome(result=text, model_passes=honest(prompt, [2, 0, 4]))
    call = Call("generate_cached", (None, 3, torch.tensor([prompt]), WINDOW, VOCAB), {},
                ("value", text), record)

    def right(got, expected, call):
        pass

    def wrong(got, expected, call):
        raise GradeFailure("new character 3 differs")

    with pytest.raises(GradeFailure) as failed:
        judge_from_calls(right)(text, text, call)
    assert str(failed.value).startswith(
        "new character 3 ('c') did not come from the model calls the grader served: "
        "model call 3, which was given the window before it, makes '.'")
    with pytest.raises(GradeFailure) as failed:
        judge_from_calls(wrong)(text, text, call)
    assert str(failed.value) == (
        "new character 3 differs\n  new character 3 ('c'): model call 3, which was given "
        "the window before it, makes '.' there (sampling with the generator seeded with 0 "
        "and restored after every draw)")
    record.model_passes = honest(prompt, tokens)
    judge_from_calls(right)(text, text, call)  # traced: passes


def test_a_worker_handed_a_hidden_model_lets_go_of_the_preloaded_shipped_one():
    models = WorkerModels()
    models.witness = (None, None)  # type: ignore[assignment] - nothing is sent here
    artifacts.shipped_model()  # as the fork server preloads it
    remote = models.remote(hide(ModelSpec("shipped")))
    assert remote.context_length == artifacts.load_config().context_length
    assert artifacts.shipped_model.cache_info().currsize == 0


def test_the_reference_may_read_what_the_witness_computed_never_the_other_way():
    from grader.sandbox.host.witness import own_instance

    stand_in = hide(ModelSpec("random", {"vocab_size": 6, "context_length": 5,
                                                "n_layer": 1, "n_head": 1, "n_embd": 4}, 9))
    reference, witnessed = artifacts.build_model(stand_in), own_instance(stand_in)
    computed = {"reference": 0, "witness": 0}

    def counting(model, name):
        inner = model.forward_with_cache

        def counted(*args):
            computed[name] += 1
            return inner(*args)

        model.forward_with_cache = counted

    counting(reference, "reference")
    counting(witnessed, "witness")
    with torch.no_grad():
        first, second = torch.tensor([[1, 2]]), torch.tensor([[3, 4]])
        answered = witnessed(first)  # during the learner's call
        assert torch.equal(reference(first), answered)  # afterwards: read, not computed
        reference(second)
        witnessed(second)  # computed: the witness never reads the reference's
    assert computed == {"reference": 1, "witness": 2}
