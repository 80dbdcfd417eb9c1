import torch


class Solution:
    def adamw_step(
        self, params: list[torch.Tensor], grads: list[torch.Tensor],
        exp_avgs: list[torch.Tensor], exp_avg_sqs: list[torch.Tensor], step: int,
        lr: float, betas: tuple[float, float], eps: float, weight_decay: float,
    ) -> tuple[list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
        """One AdamW update of every parameter, as torch.optim.AdamW.step() makes it.

        params, grads, exp_avgs, exp_avg_sqs: lists of tensors, one entry per
            parameter, each four of the same shape: the weights, their gradients,
            and AdamW's two running averages (of the gradients and of their squares).
        step: how many updates these parameters have had before this one (0 for
            the first): torch's state["step"] before the call.
        lr, betas, eps, weight_decay: AdamW's settings; betas is (beta1, beta2).

        Returns (params, exp_avgs, exp_avg_sqs) after the update, three lists in
        the order given; you may update the tensors you were given in place and
        return them, or return new ones.
        """
        raise NotImplementedError("write adamw_step(): see README.md")
