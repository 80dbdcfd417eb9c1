"""Allocates 3 GB: through torch on the first call, as a bytearray after that."""

import torch

calls = 0


class Solution:
    def crop_context(self, *args, **kwargs):
        global calls
        calls += 1
        if calls == 1:
            return torch.ones(3 << 30, dtype=torch.uint8)
        return bytearray(3 << 30)
