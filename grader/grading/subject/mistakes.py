"""Known mistakes that several generation problems share.

A mistake is diagnosed by running it on the learner's arguments and comparing
its answer with theirs, so each is a run of one generation loop, written once,
with a knob for the mistake.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from grader.model import artifacts

# The same forgotten step in every loop that rewinds its generator.
NOT_RESTORED = ("do not restore the generator after each draw",
                "call generator.set_state(initial_state) right after torch.multinomial")


def generation_loop(model: torch.nn.Module, new_chars: int, context: torch.Tensor,
                    context_length: int, int_to_char: dict[int, str], *, pick: str = "sample",
                    restore: bool = True, crop: str = "last", position: int = -1,
                    softmax_dim: int = -1, keep_row: int | None = None,
                    whole: bool = False, append: bool = True) -> str:
    """Track 1's generate(), with one knob per known mistake.

    `pick` is "sample" (torch.multinomial with seed 0), "argmax" (greedy) or
    "argmin". `crop` is "last" (right), "first", "none", a window one token
    too long ("one-over") or too short ("one-short", or "one-short-when-over"
    where it crops only a context longer than the model's), the shipped model's
    window whatever `context_length` says ("shipped"), or once, before the loop
    ("once"). With `keep_row`,
    every position's distribution is sampled and that row's token kept.
    """
    generator = torch.Generator().manual_seed(0)  # the draws of torch.manual_seed(0)
    shipped_window = artifacts.load_config().context_length if crop == "shipped" else 0
    initial_state = generator.get_state()
    new = []
    if crop == "once":
        context = context[:, -context_length:]
    with torch.no_grad():
        for _ in range(new_chars):
            if crop == "last" and context.shape[1] > context_length:
                context = context[:, -context_length:]
            elif crop == "first" and context.shape[1] > context_length:
                context = context[:, :context_length]
            elif crop == "one-over":
                context = context[:, -context_length - 1:]
            elif crop == "one-short":
                # At every step, as learners write it: with context_length 1 this is
                # context[:, -0:], every token.
                context = context[:, -(context_length - 1):]
            elif crop == "one-short-when-over" and context.shape[1] > context_length:
                context = context[:, -(context_length - 1):]
            elif crop == "shipped":
                context = context[:, -shipped_window:]
            logits = model(context)
            logits = logits[0] if keep_row is not None else logits[:, position, :]
            if pick == "argmax":
                if softmax_dim != -1:
                    # Greedy needs no softmax, but one over the batch makes every
                    # probability 1, and the argmax then token 0 every time.
                    logits = F.softmax(logits, dim=softmax_dim)
                next_token = logits.argmax(dim=-1, keepdim=True)
            elif pick == "argmin":
                next_token = logits.argmin(dim=-1, keepdim=True)
            else:
                probs = F.softmax(logits, dim=-1 if keep_row is not None else softmax_dim)
                next_token = torch.multinomial(probs, 1, generator=generator)
            if keep_row is not None:
                next_token = next_token[keep_row].view(1, 1)
            if restore:
                generator.set_state(initial_state)
            if append:
                context = torch.cat((context, next_token), dim=1)
            new.append(int(next_token))
    kept = context[0].tolist() if whole else new
    return "".join(int_to_char[i] for i in kept)
