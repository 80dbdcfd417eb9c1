"""The grader's remembered forward passes give what a fresh pass gives, and stay bounded."""

from __future__ import annotations

import pytest
import torch

from grader.model import memo
from grader.model.gpt import GPT, GPTConfig, causal_mask


def tiny() -> GPT:
    torch.manual_seed(0)
    return GPT(GPTConfig(vocab_size=11, context_length=8, n_layer=1, n_head=2, n_embd=8)).eval()


def test_a_repeated_input_gives_the_same_logits_without_a_second_pass():
    model, plain = memo.remember_outputs(tiny()), tiny()
    passes = []
    inner = model.forward_with_cache
    model.forward_with_cache = lambda *a: passes.append(1) or inner(*a)
    context = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        first, second = model(context), model(context.clone())
        other = model(torch.tensor([[1, 2, 4]]))
        assert torch.equal(first, plain(context))
        assert torch.equal(second, first)
        assert torch.equal(other, plain(torch.tensor([[1, 2, 4]])))
    assert len(passes) == 2


def test_a_caller_changing_its_logits_in_place_does_not_change_the_next_answer():
    model = memo.remember_outputs(tiny())
    context = torch.tensor([[5, 6]])
    with torch.no_grad():
        model(context).fill_(0.0)
        assert model(context).abs().sum() > 0


def test_with_gradients_on_every_pass_is_computed_and_tracked():
    model = memo.remember_outputs(tiny())
    context = torch.tensor([[1, 2]])
    with torch.no_grad():
        model(context)
    assert model(context).requires_grad


def test_what_it_holds_is_bounded(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(memo, "MAX_ELEMENTS", 3 * 11)  # three one-token answers
    model = memo.remember_outputs(tiny())
    passes = []
    inner = model.forward_with_cache
    model.forward_with_cache = lambda *a: passes.append(1) or inner(*a)
    with torch.no_grad():
        for token in range(5):
            model(torch.tensor([[token]]))
        model(torch.tensor([[4]]))  # recent: still held
        model(torch.tensor([[0]]))  # the oldest: forgotten
    assert len(passes) == 6


def test_after_forgetting_a_window_is_computed_afresh():
    model = memo.remember_outputs(tiny())
    passes = []
    inner = model.forward_with_cache
    model.forward_with_cache = lambda *a: passes.append(1) or inner(*a)
    context = torch.tensor([[3, 4]])
    with torch.no_grad():
        before = model(context)
        model.head.weight.add_(1.0)  # changed (a worker then puts the weights back)
        model.forget_outputs()
        after = model(context)
    assert len(passes) == 2
    assert not torch.equal(before, after)


def test_a_memo_may_read_another_one_way():
    first, second = memo.remember_outputs(tiny()), None
    second = memo.remember_outputs(tiny(), also=first.remembered)
    context = torch.tensor([[1, 2]])
    with torch.no_grad():
        answer = first(context)
        assert first.remembered((tuple(context.shape), context.numpy().tobytes())) is not None
        passes = []
        inner = second.forward_with_cache
        second.forward_with_cache = lambda *a: passes.append(1) or inner(*a)
        assert torch.equal(second(context), answer) and passes == []
        second(torch.tensor([[3]]))
        assert first.remembered(((1, 1), torch.tensor([[3]]).numpy().tobytes())) is None


class LearnersModel(torch.nn.Module):
    """A learner's model that keeps its causal mask from its first pass."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(11, 4)
        self.mask: torch.Tensor | None = None

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        self.grad_enabled = torch.is_grad_enabled()
        T = context.shape[1]
        if self.mask is None:
            self.mask = torch.ones(T, T).tril()
        return self.embed(context) * self.mask[-1, :T, None]


def test_the_graders_models_run_in_inference_mode_and_hand_out_ordinary_tensors():
    model = memo.remember_outputs(tiny().requires_grad_(False))
    modes = []
    model.ln_f.register_forward_hook(lambda *_: modes.append(torch.is_inference_mode_enabled()))
    logits = model(torch.tensor([[1, 2, 3]]))
    assert modes == [True]
    assert not logits.is_inference()
    logits.add_(1.0)  # a caller's own, to change (an inference tensor refuses this)


def test_a_learners_model_runs_as_it_is_and_can_train_on_what_it_kept():
    model = LearnersModel()
    remembered = memo.remember_outputs(model)
    with torch.no_grad():
        remembered(torch.tensor([[1, 2, 3]]))
    assert not model.grad_enabled  # in the caller's mode
    assert model.mask is not None and not model.mask.is_inference()
    model.embed.weight.requires_grad_(True)
    remembered(torch.tensor([[1, 2, 3]])).sum().backward()  # the kept mask in a graph
    assert model.embed.weight.grad is not None


def test_a_mask_first_made_in_inference_mode_is_an_ordinary_tensor():
    # Kept for every later pass of that shape, training ones too (a product with
    # an inference tensor cannot be saved for backward).
    causal_mask.cache_clear()
    with torch.inference_mode():
        mask = causal_mask(3, 5, torch.device("cpu"))
    assert not mask.is_inference()
