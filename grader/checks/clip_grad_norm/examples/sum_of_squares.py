import math

import torch


class Solution:
    def clip_grad_norm(self, parameters, max_norm):
        # The squares of every entry summed in float64, and p.grad replaced.
        total = 0.0
        for p in parameters:
            if p.grad is not None:
                total += p.grad.double().pow(2).sum().item()
        total = math.sqrt(total)
        if total > 0 and max_norm / (total + 1e-6) < 1:
            for p in parameters:
                if p.grad is not None:
                    p.grad = p.grad * (max_norm / (total + 1e-6))
        dtype = next((p.grad.dtype for p in parameters if p.grad is not None), torch.float32)
        return torch.tensor(total, dtype=dtype)
