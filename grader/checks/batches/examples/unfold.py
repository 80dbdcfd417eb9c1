import torch


class Solution:
    def get_batch(self, data, context_length, batch_size, generator):
        if data.numel() < context_length + 1:
            raise ValueError(f"{data.numel()} tokens hold no window of {context_length}")
        starts = torch.randint(data.numel() - context_length, (batch_size,), generator=generator)
        # Every window with its target token, as rows of context_length + 1 tokens.
        rows = data.unfold(0, context_length + 1, 1)[starts]
        return rows[:, :-1], rows[:, 1:]
