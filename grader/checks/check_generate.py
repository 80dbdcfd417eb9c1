"""Checks for problem 6, generate: the whole sampling loop."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.grading.cases import generation_cases
from grader.grading.contract import Contract
from grader.grading.judges import judge_reset_sampling
from grader.grading.skeleton import Mistake
from grader.grading.strategies import generation_example


def loop(model, new_chars, context, context_length, int_to_char, *, crop="last", position=-1,
         restore=True, pick="sample", whole=False, softmax_dim=-1, keep_row=None):
    """The reference loop with one knob per known mistake."""
    generator = torch.manual_seed(0)
    initial_state = generator.get_state()
    new = []
    for _ in range(new_chars):
        if crop == "last" and context.shape[1] > context_length:
            context = context[:, -context_length:]
        elif crop == "first" and context.shape[1] > context_length:
            context = context[:, :context_length]
        logits = model(context)
        if keep_row is None:
            logits = logits[:, position, :]
            probs = F.softmax(logits, dim=softmax_dim)
        else:
            probs = F.softmax(logits[0], dim=-1)
        if pick == "argmax":
            next_token = probs.argmax(dim=-1, keepdim=True)
        else:
            next_token = torch.multinomial(probs, 1, generator=generator)
        if keep_row is not None:
            next_token = next_token[keep_row].view(1, 1)
        if restore:
            generator.set_state(initial_state)
        context = torch.cat((context, next_token), dim=1)
        new.append(int(next_token))
    kept = context[0].tolist() if whole else new
    return "".join(int_to_char[i] for i in kept)


MISTAKES = [
    Mistake("take the most likely token (argmax) instead of sampling",
            "draw the token with torch.multinomial(probs, 1, generator=generator)",
            lambda *a: loop(*a, pick="argmax")),
    Mistake("do not restore the generator after each draw",
            "call generator.set_state(initial_state) right after torch.multinomial",
            lambda *a: loop(*a, restore=False)),
    Mistake("crop the wrong end of the context (keep the oldest tokens)",
            "keep the most recent tokens: context[:, -context_length:]",
            lambda *a: loop(*a, crop="first")),
    Mistake("do not crop the context",
            "crop to the last context_length tokens before every forward pass",
            lambda *a: loop(*a, crop="none")),
    Mistake("use the first position's logits instead of the last",
            "the next token is predicted at the last position: logits[:, -1, :]",
            lambda *a: loop(*a, position=0)),
    Mistake("sample from all positions instead of the last",
            "keep only the last position before softmax: logits[:, -1, :]",
            lambda *a: loop(*a, keep_row=-1)),
    Mistake("sample from all positions instead of the last",
            "keep only the last position before softmax: logits[:, -1, :]",
            lambda *a: loop(*a, keep_row=0)),
    Mistake("take softmax over the batch dimension",
            "softmax over the vocabulary: dim=-1",
            lambda *a: loop(*a, softmax_dim=0)),
    Mistake("return the prompt as well as the new characters",
            "return only the new_chars characters you generated",
            lambda *a: loop(*a, whole=True)),
]


CONTRACT = Contract(
    problem="generate", method="generate",
    arg_names=("model", "new_chars", "context", "context_length", "int_to_char"),
    cases=generation_cases,
    judge=judge_reset_sampling, mistakes=MISTAKES,
)

test_shipped_model, test_random_models = CONTRACT.tests(
    "The text for a fixed prompt on the shipped model",
    "The text on small random models of other sizes, against the reference",
    generation_example)
