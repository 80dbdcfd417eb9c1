import math

import torch


class Solution:
    def learning_rate(self, step, max_lr, min_lr, warmup_steps, steps):
        # A LambdaLR scheduler with the schedule as its factor, stepped `step` times.
        def factor(s):
            if s < warmup_steps:
                return (s + 1) / warmup_steps
            progress = min(1.0, (s - warmup_steps) / max(1, steps - warmup_steps))
            return (min_lr + (max_lr - min_lr) * (1 + math.cos(math.pi * progress)) / 2) / max_lr

        weight = torch.zeros(1, requires_grad=True)
        optimizer = torch.optim.SGD([weight], lr=max_lr)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
        for _ in range(step):
            optimizer.step()  # no gradient: it moves nothing, but comes first, as it should
            scheduler.step()
        return optimizer.param_groups[0]["lr"]
