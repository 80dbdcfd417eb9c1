import torch
from torchtyping import TensorType


class Solution:
    def get_batch(
        self, data: TensorType["N", int], context_length: int, batch_size: int,
        generator: torch.Generator,
    ) -> tuple[TensorType["B", "T", int], TensorType["B", "T", int]]:
        windows = len(data) - context_length
        if windows < 1:
            raise ValueError(f"{len(data)} tokens hold no window of {context_length} tokens "
                             "and its target: the data needs at least context_length + 1")
        # One draw of every start, from the caller's generator: the same generator
        # state gives the same batch, and the generator moves on for the next one.
        starts = torch.randint(windows, (batch_size,), generator=generator)
        x = torch.stack([data[s : s + context_length] for s in starts.tolist()])
        y = torch.stack([data[s + 1 : s + context_length + 1] for s in starts.tolist()])
        return x, y
