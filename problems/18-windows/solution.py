from torchtyping import TensorType


class Solution:
    def window(
        self, data: TensorType["N", int], context_length: int, i: int
    ) -> tuple[TensorType["T", int], TensorType["T", int]]:
        """The input window starting at token i of `data`, and its target window.

        data: the encoded corpus, a LongTensor of shape (N,).
        context_length: the number of tokens in a window (a positive int).
        i: which window: its first token is data[i].

        Returns (x, y), two LongTensors of shape (context_length,): x holds the
        tokens from i on, and y the same tokens shifted one to the left, so that
        y[t] is the token that comes after x[t]. There are
        len(data) - context_length windows, numbered from 0; raises ValueError
        for any other i.
        """
        raise NotImplementedError("write window(): see README.md")
