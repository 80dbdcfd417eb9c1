import torch
from torchtyping import TensorType


class Solution:
    def last_logits(
        self, model: torch.nn.Module, context: TensorType[1, "T", int]
    ) -> TensorType[1, "vocab_size", float]:
        """The model's scores for the token that comes right after `context`.

        model: called as model(context); returns logits of shape (1, T, vocab_size),
            where logits[0, t] scores every possible token to follow context[0, :t+1].
        context: token ids, a (1, T) LongTensor with 1 <= T <= the model's context_length.

        Returns a (1, vocab_size) float tensor: the raw logits (not probabilities)
        at the last position.
        """
        raise NotImplementedError("write last_logits(): see README.md")
