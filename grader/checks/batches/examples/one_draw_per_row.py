import torch


class Solution:
    def get_batch(self, data, context_length, batch_size, generator):
        if len(data) <= context_length:
            raise ValueError("not enough data for one window")
        xs, ys = [], []
        for _ in range(batch_size):
            start = int(torch.randint(len(data) - context_length, (1,), generator=generator))
            xs.append(data[start:start + context_length])
            ys.append(data[start + 1:start + context_length + 1])
        return torch.stack(xs), torch.stack(ys)
