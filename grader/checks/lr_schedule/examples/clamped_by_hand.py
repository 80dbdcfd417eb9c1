from math import cos, pi


class Solution:
    def learning_rate(self, step, max_lr, min_lr, warmup_steps, steps):
        if step >= steps:
            return float(min_lr)
        if step < warmup_steps:
            return (step + 1) * max_lr / warmup_steps
        t = (step - warmup_steps) / (steps - warmup_steps)
        return float(max_lr - (max_lr - min_lr) * (1 - cos(pi * t)) / 2)
