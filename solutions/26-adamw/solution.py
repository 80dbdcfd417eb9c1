import math

import torch


class Solution:
    def adamw_step(
        self, params: list[torch.Tensor], grads: list[torch.Tensor],
        exp_avgs: list[torch.Tensor], exp_avg_sqs: list[torch.Tensor], step: int,
        lr: float, betas: tuple[float, float], eps: float, weight_decay: float,
    ) -> tuple[list[torch.Tensor], list[torch.Tensor], list[torch.Tensor]]:
        beta1, beta2 = betas
        t = step + 1  # this update's number: torch counts it before correcting
        bias_correction1 = 1 - beta1 ** t
        bias_correction2 = 1 - beta2 ** t
        new_params, new_avgs, new_sqs = [], [], []
        for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
            # Decoupled decay: the weight shrinks on its own, before the Adam move,
            # and the gradient's averages never see it.
            p = p * (1 - lr * weight_decay)
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g * g
            # eps joins after the square root and the bias correction, as in torch.
            denom = v.sqrt() / math.sqrt(bias_correction2) + eps
            p = p - (lr / bias_correction1) * m / denom
            new_params.append(p)
            new_avgs.append(m)
            new_sqs.append(v)
        return new_params, new_avgs, new_sqs
