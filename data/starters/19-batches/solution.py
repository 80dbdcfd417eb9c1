import torch
from torchtyping import TensorType


class Solution:
    def get_batch(
        self, data: TensorType["N", int], context_length: int, batch_size: int,
        generator: torch.Generator,
    ) -> tuple[TensorType["B", "T", int], TensorType["B", "T", int]]:
        """batch_size random windows of `data` and their targets, stacked.

        data: the encoded corpus, a LongTensor of shape (N,).
        context_length: the tokens in each window (a positive int).
        batch_size: how many windows to draw (a positive int).
        generator: the random number generator to draw the starts with; leave it
            where the draw leaves it, so that the next batch is a different one.

        Draw every start at once with
        torch.randint(len(data) - context_length, (batch_size,), generator=generator)
        and return (x, y), two LongTensors of shape (batch_size, context_length):
        row b of x is the window starting at starts[b], and row b of y the same
        window shifted by one token. Raises ValueError if data holds no window,
        that is if len(data) <= context_length.
        """
        raise NotImplementedError("write get_batch(): see README.md")
