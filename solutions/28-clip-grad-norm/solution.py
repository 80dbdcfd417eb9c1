import torch


class Solution:
    def clip_grad_norm(self, parameters: list[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
        grads = [p.grad for p in parameters if p.grad is not None]
        if not grads:
            return torch.tensor(0.0)
        # The norm of all the gradients as one long vector: the norm of their norms.
        total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g)
                                                      for g in grads]))
        # The 1e-6 keeps the division finite; the factor is used only below 1.
        coef = max_norm / (total + 1e-6)
        if coef < 1:
            for g in grads:
                g.mul_(coef)  # in place: the optimizer reads p.grad itself
        return total
