import torch


class Solution:
    def clip_grad_norm(self, parameters, max_norm):
        grads = [p.grad for p in parameters if p.grad is not None]
        if len(grads) == 0:
            return torch.tensor(0.0)
        norms = [torch.norm(g, 2.0) for g in grads]
        total_norm = torch.norm(torch.stack(norms), 2.0)
        clip_coef = max_norm / (total_norm + 1e-6)
        clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
        for g in grads:
            g.mul_(clip_coef_clamped)
        return total_norm
