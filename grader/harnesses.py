"""Drivers for answers that are not a single Solution method call.

They run inside the worker, next to the submission, and return plain data.
A check calls one with `kata.run("harness:<name>", ...)`; the first argument
each receives is the submission's module.
"""

from __future__ import annotations


def greedy_with_fixed_logits(module, logits, new_chars, context, context_length, int_to_char):
    """`greedy()` on a stand-in model whose logits are `logits` at every position.

    Trained models almost never tie exactly; this one ties on purpose, to see
    which of several equally likely tokens a learner's greedy picks.
    """
    import torch

    class FixedLogits(torch.nn.Module):
        def forward(self, context):
            if context.dim() != 2 or context.dtype != torch.long:
                raise ValueError("the model takes token ids as a LongTensor of shape (B, T)")
            if context.shape[1] > context_length:
                raise ValueError(f"the model sees at most context_length={context_length} "
                                 f"tokens, but got {context.shape[1]}")
            return logits.expand(context.shape[0], context.shape[1], -1).clone()

    return module.Solution().greedy(FixedLogits(), new_chars, context, context_length,
                                    int_to_char)
