import torch


class Solution:
    def window(self, data, context_length, i):
        if i not in range(len(data) - context_length):
            raise ValueError("window out of range")
        positions = torch.arange(i, i + context_length)
        return [data[positions], data[positions + 1]]
