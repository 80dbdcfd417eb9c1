import math

import torch


class Solution:
    def adamw_step(self, params, grads, exp_avgs, exp_avg_sqs, step, lr, betas, eps,
                   weight_decay):
        # torch's _single_tensor_adamw, in place.
        beta1, beta2 = betas
        step += 1
        for param, grad, exp_avg, exp_avg_sq in zip(params, grads, exp_avgs, exp_avg_sqs):
            param.mul_(1 - lr * weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size = lr / bias_correction1
            denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
            param.addcdiv_(exp_avg, denom, value=-step_size)
        return params, exp_avgs, exp_avg_sqs


_ = torch  # imported as a learner would, for the tensors' methods
