import math


class Solution:
    def learning_rate(
        self, step: int, max_lr: float, min_lr: float, warmup_steps: int, steps: int
    ) -> float:
        if step < warmup_steps:
            # Step 0 trains too: the line reaches max_lr at the warm-up's last step.
            return max_lr * (step + 1) / warmup_steps
        # Half a cosine over the steps after the warm-up; past the last one, the floor.
        progress = min(1.0, (step - warmup_steps) / max(1, steps - warmup_steps))
        return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))
