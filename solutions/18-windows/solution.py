from torchtyping import TensorType


class Solution:
    def window(
        self, data: TensorType["N", int], context_length: int, i: int
    ) -> tuple[TensorType["T", int], TensorType["T", int]]:
        # The target of window i reaches one token further than its input, so the
        # last start that still has a full target is len(data) - context_length - 1.
        windows = len(data) - context_length
        if not 0 <= i < windows:
            raise ValueError(f"window {i} does not exist: {len(data)} tokens hold "
                             f"{max(windows, 0)} windows of {context_length} tokens "
                             f"and their targets, numbered from 0")
        x = data[i : i + context_length]
        # Shifted by one: y[t] is the token that follows x[: t + 1].
        y = data[i + 1 : i + context_length + 1]
        return x, y
