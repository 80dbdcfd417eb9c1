import math


class Solution:
    def learning_rate(self, step, max_lr, min_lr, warmup_steps, steps):
        # 1) linear warm-up for warmup_steps steps
        if step < warmup_steps:
            return max_lr * (step + 1) / warmup_steps
        # 2) past the end, the floor
        if step > steps:
            return min_lr
        # 3) in between, cosine decay down to min_lr
        decay_ratio = (step - warmup_steps) / (steps - warmup_steps)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
        return min_lr + coeff * (max_lr - min_lr)
