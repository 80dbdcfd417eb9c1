import torch


class Solution:
    def clip_grad_norm(self, parameters, max_norm):
        with_grads = [p for p in parameters if p.grad is not None]
        if not with_grads:
            return torch.tensor(0.0)
        flat = torch.cat([p.grad.reshape(-1) for p in with_grads])
        total = flat.norm()
        if total > max_norm:
            scale = max_norm / (total + 1e-6)
            for p in with_grads:
                p.grad.detach().mul_(scale)
        return total
