import torch


class Solution:
    def adamw_step(self, params, grads, exp_avgs, exp_avg_sqs, step, lr, betas, eps,
                   weight_decay):
        # torch.optim.AdamW itself, with the state put where it keeps it.
        weights = [p.clone().requires_grad_(True) for p in params]
        for w, g in zip(weights, grads):
            w.grad = g.clone()
        optimizer = torch.optim.AdamW(weights, lr=lr, betas=betas, eps=eps,
                                      weight_decay=weight_decay)
        for w, m, v in zip(weights, exp_avgs, exp_avg_sqs):
            optimizer.state[w] = {"step": torch.tensor(float(step)), "exp_avg": m.clone(),
                                  "exp_avg_sq": v.clone()}
        optimizer.step()
        return ([w.detach() for w in weights],
                [optimizer.state[w]["exp_avg"] for w in weights],
                [optimizer.state[w]["exp_avg_sq"] for w in weights])
