import torch


class Solution:
    def adamw_step(self, params, grads, exp_avgs, exp_avg_sqs, step, lr, betas, eps,
                   weight_decay):
        # Every parameter at once with torch._foreach_*, worked in float64.
        beta1, beta2 = betas
        t = step + 1
        dtypes = [p.dtype for p in params]
        p = [x.double() for x in params]
        g = [x.double() for x in grads]
        m = torch._foreach_add(torch._foreach_mul([x.double() for x in exp_avgs], beta1),
                               torch._foreach_mul(g, 1 - beta1))
        v = torch._foreach_add(torch._foreach_mul([x.double() for x in exp_avg_sqs], beta2),
                               torch._foreach_mul(torch._foreach_mul(g, g), 1 - beta2))
        p = torch._foreach_mul(p, 1 - lr * weight_decay)
        denom = torch._foreach_add(torch._foreach_div(torch._foreach_sqrt(v),
                                                      (1 - beta2 ** t) ** 0.5), eps)
        moves = torch._foreach_mul(torch._foreach_div(m, denom), lr / (1 - beta1 ** t))
        p = torch._foreach_sub(p, moves)
        back = [[x.to(d) for x, d in zip(xs, dtypes)] for xs in (p, m, v)]
        return tuple(back)
