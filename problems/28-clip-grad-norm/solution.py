import torch


class Solution:
    def clip_grad_norm(self, parameters: list[torch.nn.Parameter], max_norm: float) -> torch.Tensor:
        """Clip the gradients by their global norm, in place, as
        torch.nn.utils.clip_grad_norm_(parameters, max_norm) does.

        parameters: the model's parameters; skip those whose .grad is None.
        max_norm: the largest norm the gradients may have together.

        The total norm is the 2-norm of every gradient's entries taken as one long
        vector. If it is above max_norm, scale every p.grad, in place, by
        max_norm / (total + 1e-6); otherwise leave them as they are. Returns the
        total norm before clipping, as a 0-d tensor (0 if no parameter has a gradient).
        """
        raise NotImplementedError("write clip_grad_norm(): see README.md")
