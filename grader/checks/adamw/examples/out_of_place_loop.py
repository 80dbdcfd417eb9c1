class Solution:
    def adamw_step(self, params, grads, exp_avgs, exp_avg_sqs, step, lr, betas, eps,
                   weight_decay):
        beta1, beta2 = betas
        t = step + 1
        new_params, new_avgs, new_sqs = [], [], []
        for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
            p = p * (1 - lr * weight_decay)
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g * g
            m_hat = m / (1 - beta1 ** t)
            v_hat = v / (1 - beta2 ** t)
            p = p - lr * m_hat / (v_hat.sqrt() + eps)
            new_params.append(p)
            new_avgs.append(m)
            new_sqs.append(v)
        return new_params, new_avgs, new_sqs
