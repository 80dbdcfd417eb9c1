import torch


class Solution:
    def get_batch(self, data, context_length, batch_size, generator):
        if len(data) <= context_length:
            raise ValueError("not enough data for one window")
        ix = torch.randint(len(data) - context_length, (batch_size,), generator=generator)
        x = torch.stack([data[i:i + context_length] for i in ix])
        y = torch.stack([data[i + 1:i + context_length + 1] for i in ix])
        return x, y
