import torch


class Solution:
    def get_batch(self, data, context_length, batch_size, generator):
        high = len(data) - context_length
        if high < 1:
            raise ValueError("data too short")
        starts = torch.randint(high, (batch_size,), generator=generator)
        positions = starts.view(-1, 1) + torch.arange(context_length).view(1, -1)
        return data[positions], data[positions + 1]
